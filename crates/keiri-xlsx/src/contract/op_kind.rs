//! The op names: what each op is called in requests, diffs and errors, the fields it takes,
//! and which ops are read by their own struct.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The operation names, as they appear in `op` fields of diffs and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    SetValue,
    SetFormula,
    AddSheet,
    SetRangeValues,
    FillFormula,
    SetValueIf,
    SetFormulaIf,
    DeleteSheet,
    DrawGridBorder,
    SetBold,
    SetFontSize,
    SetFontColor,
    SetFillColor,
    SetDimensions,
    AutoFitColumns,
    MergeCells,
    UnmergeCells,
    SetAlignment,
    SetStyle,
    ApplyTableStyle,
    DeleteTable,
    RestoreDesignSnapshot,
    UpdateRowsByKey,
    AppendRows,
    CopySheet,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::SetValue => "set_value",
            OpKind::SetFormula => "set_formula",
            OpKind::AddSheet => "add_sheet",
            OpKind::SetRangeValues => "set_range_values",
            OpKind::FillFormula => "fill_formula",
            OpKind::SetValueIf => "set_value_if",
            OpKind::SetFormulaIf => "set_formula_if",
            OpKind::DeleteSheet => "delete_sheet",
            OpKind::DrawGridBorder => "draw_grid_border",
            OpKind::SetBold => "set_bold",
            OpKind::SetFontSize => "set_font_size",
            OpKind::SetFontColor => "set_font_color",
            OpKind::SetFillColor => "set_fill_color",
            OpKind::SetDimensions => "set_dimensions",
            OpKind::AutoFitColumns => "auto_fit_columns",
            OpKind::MergeCells => "merge_cells",
            OpKind::UnmergeCells => "unmerge_cells",
            OpKind::SetAlignment => "set_alignment",
            OpKind::SetStyle => "set_style",
            OpKind::ApplyTableStyle => "apply_table_style",
            OpKind::DeleteTable => "delete_table",
            OpKind::RestoreDesignSnapshot => "restore_design_snapshot",
            OpKind::UpdateRowsByKey => "update_rows_by_key",
            OpKind::AppendRows => "append_rows",
            OpKind::CopySheet => "copy_sheet",
        }
    }

    /// Every op, in the order of ExStruct's op list (then our extensions).
    pub const ALL: [OpKind; 25] = [
        OpKind::SetValue,
        OpKind::SetFormula,
        OpKind::AddSheet,
        OpKind::SetRangeValues,
        OpKind::FillFormula,
        OpKind::SetValueIf,
        OpKind::SetFormulaIf,
        OpKind::CopySheet,
        OpKind::UpdateRowsByKey,
        OpKind::AppendRows,
        OpKind::DrawGridBorder,
        OpKind::SetBold,
        OpKind::SetFontSize,
        OpKind::SetFontColor,
        OpKind::SetFillColor,
        OpKind::SetDimensions,
        OpKind::AutoFitColumns,
        OpKind::MergeCells,
        OpKind::UnmergeCells,
        OpKind::SetAlignment,
        OpKind::SetStyle,
        OpKind::ApplyTableStyle,
        OpKind::RestoreDesignSnapshot,
        OpKind::DeleteSheet,
        OpKind::DeleteTable,
    ];

    /// Whether the op is one of the styling and structure ops (see the `design` module).
    pub fn is_design(self) -> bool {
        !matches!(
            self,
            OpKind::SetValue
                | OpKind::SetFormula
                | OpKind::AddSheet
                | OpKind::SetRangeValues
                | OpKind::FillFormula
                | OpKind::SetValueIf
                | OpKind::SetFormulaIf
                | OpKind::DeleteSheet
                | OpKind::UpdateRowsByKey
                | OpKind::AppendRows
                | OpKind::CopySheet
        )
    }

    /// Whether the op is read by its own struct (the design ops and the row ops), rather than
    /// from the shared value-op fields.
    pub(super) fn is_struct(self) -> bool {
        self.is_design()
            || matches!(
                self,
                OpKind::UpdateRowsByKey | OpKind::AppendRows | OpKind::CopySheet
            )
    }

    /// The fields the op takes (besides `op`), canonical names only.
    pub fn fields(self) -> &'static [&'static str] {
        const STYLE: [&str; 3] = ["sheet", "cell", "range"];
        match self {
            OpKind::SetValue => &["sheet", "cell", "value"],
            OpKind::SetFormula => &["sheet", "cell", "formula"],
            OpKind::AddSheet => &["sheet"],
            OpKind::DeleteSheet => &["sheet", "copy_of"],
            OpKind::SetRangeValues => &["sheet", "range", "values"],
            OpKind::FillFormula => &["sheet", "range", "base_cell", "formula"],
            OpKind::SetValueIf => &["sheet", "cell", "expected", "value"],
            OpKind::SetFormulaIf => &["sheet", "cell", "expected", "formula"],
            OpKind::DrawGridBorder => &["sheet", "base_cell", "row_count", "col_count"],
            OpKind::SetBold => &[STYLE[0], STYLE[1], STYLE[2], "bold"],
            OpKind::SetFontSize => &[STYLE[0], STYLE[1], STYLE[2], "font_size"],
            OpKind::SetFontColor => &[STYLE[0], STYLE[1], STYLE[2], "color"],
            OpKind::SetFillColor => &[STYLE[0], STYLE[1], STYLE[2], "fill_color"],
            OpKind::SetAlignment => &[
                "sheet",
                "cell",
                "range",
                "horizontal_align",
                "vertical_align",
                "wrap_text",
            ],
            OpKind::SetStyle => &[
                "sheet",
                "cell",
                "range",
                "bold",
                "font_size",
                "color",
                "fill_color",
                "horizontal_align",
                "vertical_align",
                "wrap_text",
            ],
            OpKind::SetDimensions => &["sheet", "rows", "columns", "row_height", "column_width"],
            OpKind::AutoFitColumns => &["sheet", "columns", "min_width", "max_width"],
            OpKind::MergeCells | OpKind::UnmergeCells => &["sheet", "range"],
            OpKind::ApplyTableStyle => &["sheet", "range", "style", "table_name"],
            OpKind::DeleteTable => &["sheet", "table_name"],
            OpKind::RestoreDesignSnapshot => &["sheet", "design_snapshot"],
            OpKind::UpdateRowsByKey => &[
                "sheet",
                "header_row",
                "key_column",
                "rows",
                "on_missing",
                "fill_color",
                "fill_columns",
                "extend_ranges",
            ],
            OpKind::AppendRows => &[
                "sheet",
                "header_row",
                "rows",
                "copy_style_from",
                "extend_ranges",
            ],
            OpKind::CopySheet => &["sheet", "new_sheet", "position"],
        }
    }

    /// The op with this name, if there is one.
    pub fn parse(name: &str) -> Option<OpKind> {
        Some(match name {
            "set_value" => OpKind::SetValue,
            "set_formula" => OpKind::SetFormula,
            "add_sheet" => OpKind::AddSheet,
            "set_range_values" => OpKind::SetRangeValues,
            "fill_formula" => OpKind::FillFormula,
            "set_value_if" => OpKind::SetValueIf,
            "set_formula_if" => OpKind::SetFormulaIf,
            "delete_sheet" => OpKind::DeleteSheet,
            "draw_grid_border" => OpKind::DrawGridBorder,
            "set_bold" => OpKind::SetBold,
            "set_font_size" => OpKind::SetFontSize,
            "set_font_color" => OpKind::SetFontColor,
            "set_fill_color" => OpKind::SetFillColor,
            "set_dimensions" => OpKind::SetDimensions,
            "auto_fit_columns" => OpKind::AutoFitColumns,
            "merge_cells" => OpKind::MergeCells,
            "unmerge_cells" => OpKind::UnmergeCells,
            "set_alignment" => OpKind::SetAlignment,
            "set_style" => OpKind::SetStyle,
            "apply_table_style" => OpKind::ApplyTableStyle,
            "delete_table" => OpKind::DeleteTable,
            "restore_design_snapshot" => OpKind::RestoreDesignSnapshot,
            "update_rows_by_key" => OpKind::UpdateRowsByKey,
            "append_rows" => OpKind::AppendRows,
            "copy_sheet" => OpKind::CopySheet,
            _ => return None,
        })
    }
}
