// Typed wrappers, one per API function. Components import these and never the transport.

import { call } from './transport';
import type {
  CatalogListRequest,
  CatalogListResponse,
  PlanDryRunRequest,
  PlanDryRunResponse,
  PlanRegisterRequest,
  PlanRegisterResponse,
  PlanValidateRequest,
  PlanValidateResponse,
} from './types';

export { ApiError, INVALID_RESPONSE, TRANSPORT_ERROR, isTauri } from './transport';
export type * from './types';

export function catalogList(request: CatalogListRequest = {}): Promise<CatalogListResponse> {
  return call<CatalogListResponse>('catalog_list', request);
}

export function planValidate(request: PlanValidateRequest): Promise<PlanValidateResponse> {
  return call<PlanValidateResponse>('plan_validate', request);
}

export function planDryRun(request: PlanDryRunRequest): Promise<PlanDryRunResponse> {
  return call<PlanDryRunResponse>('plan_dry_run', request);
}

export function planRegister(request: PlanRegisterRequest): Promise<PlanRegisterResponse> {
  return call<PlanRegisterResponse>('plan_register', request);
}
