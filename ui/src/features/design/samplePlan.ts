// A small plan for the tests, from the one fixture the e2e and desktop tests read too.
import plan from '../../../tests/fixtures/sample-plan.yaml?raw';

export const SAMPLE_PLAN: string = plan;
