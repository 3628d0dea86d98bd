use super::*;

fn check_shift(input: &str, rows: i64, cols: i64, expect: &str) {
    let got = shift(input, rows, cols).unwrap();
    assert_eq!(got.text, expect, "shift({input:?}, {rows}, {cols})");
}

#[test]
fn shifts_relative_parts_only() {
    check_shift("A1+B2", 1, 1, "B2+C3");
    check_shift("$A1+A$1+$A$1", 2, 2, "$A3+C$1+$A$1");
    check_shift("SUM(A1:B3)*2", 3, 0, "SUM(A4:B6)*2");
    check_shift("SUM(A:A)+SUM(1:1)", 1, 1, "SUM(B:B)+SUM(2:2)");
    check_shift("SUM($A:$A)", 0, 5, "SUM($A:$A)");
    check_shift("Sheet2!A1+'My Sheet'!B2", 1, 0, "Sheet2!A2+'My Sheet'!B3");
    check_shift("入力!C3*2", 1, 0, "入力!C4*2");
    check_shift("\"A1\"&A1", 1, 0, "\"A1\"&A2");
    check_shift("LOG10(A1)", 1, 0, "LOG10(A2)");
    check_shift(
        "_xlfn.IFS(B10>=85,\"A\",TRUE,\"D\")",
        1,
        0,
        "_xlfn.IFS(B11>=85,\"A\",TRUE,\"D\")",
    );
    check_shift("Table1[Amount]+A1", 1, 0, "Table1[Amount]+A2");
    check_shift("MyName+A1", 0, 1, "MyName+B1");
    check_shift("A1", -1, 0, "#REF!");
    check_shift("Sheet2!A1+1", 0, -1, "Sheet2!#REF!+1");
    check_shift("SUM(A1:A3)", -1, 0, "SUM(#REF!)");
    check_shift("XFD1", 0, 1, "#REF!");
    check_shift("A1 + B1", 0, 0, "A1 + B1");
}

#[test]
fn reports_lost_references() {
    let s = shift("A1+$B$1+C2", -1, 0).unwrap();
    assert_eq!(s.text, "#REF!+$B$1+C1");
    assert_eq!(s.lost, ["A1"]);
}

fn check_syntax(input: &str, expect: Result<(), &str>) {
    match (check(input), expect) {
        (Ok(_), Ok(())) => {}
        (Err(e), Err(want)) => {
            assert!(e.message.contains(want), "{input:?}: {e} lacks {want:?}")
        }
        (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn syntax_check() {
    check_syntax("SUM(A1:A3)", Ok(()));
    check_syntax("IF(A1,,1)", Ok(()));
    check_syntax("SUM(1,)", Ok(()));
    check_syntax("-A1%", Ok(()));
    check_syntax("{1,2;3,-4}", Ok(()));
    check_syntax("(A1,B1)", Ok(()));
    check_syntax("A1:A3 B1:B3", Ok(()));
    check_syntax("'Sheet 1'!A1&\"x\"\"y\"", Ok(()));
    check_syntax("NOW()", Ok(()));
    check_syntax("SUM(1,", Err("missing )"));
    check_syntax("(1", Err("missing )"));
    check_syntax("1++", Err("ends where a value"));
    check_syntax("=1", Err("unexpected"));
    check_syntax("SUM(1))", Err("unexpected"));
    check_syntax("\"abc", Err("unterminated text"));
    check_syntax("'abc", Err("unterminated quoted"));
    check_syntax("A1 ¤ B1", Err("unexpected character"));
    check_syntax("#FOO!", Err("unknown error"));
    check_syntax("{A1}", Err("array constant"));
    check_syntax("", Err("empty"));
    check_syntax(&"(".repeat(500), Err("nested too deeply"));
}

#[test]
fn facts() {
    let f = check("Missing!A1+#REF!+A1/0+x/0^2").unwrap();
    assert_eq!(f.sheets, ["Missing"]);
    assert_eq!(f.error_literals, ["#REF!"]);
    assert!(f.divides_by_zero);
    assert!(!check("A1/0.5").unwrap().divides_by_zero);
    assert_eq!(
        check("[1]Sheet1!A1").unwrap().unsupported,
        Some("a reference to another workbook")
    );
    assert_eq!(check("SUM(Jan:Mar!A1)").unwrap().sheets, ["Jan", "Mar"]);
    assert_eq!(
        check("Table1[Col]").unwrap().unsupported,
        Some("a table reference")
    );
}

fn bound_whole_references(formula: &str, rows: u32, cols: u32) -> String {
    bound_whole_references_with(formula, |_, area| match area {
        WholeArea::Columns(..) => rows,
        WholeArea::Rows(..) => cols,
    })
}

#[test]
fn whole_references_are_bounded_for_the_engine() {
    assert_eq!(
        bound_whole_references("VLOOKUP(A2,'2024.9'!A:K,2,FALSE)+SUM($B:$B)", 500, 30),
        "VLOOKUP(A2,'2024.9'!A$1:K$500,2,FALSE)+SUM($B$1:$B$500)"
    );
    assert_eq!(
        bound_whole_references("SUM(2:3)+A1", 500, 30),
        "SUM($A2:$AD3)+A1"
    );
    assert_eq!(bound_whole_references("\"A:A\"", 5, 5), "\"A:A\"");
    let by_area = |_: Option<&Prefix>, area| match area {
        WholeArea::Columns(1, 1) => 7,
        WholeArea::Columns(..) => 70,
        WholeArea::Rows(..) => 3,
    };
    assert_eq!(
        bound_whole_references_with("SUM(A:A)+SUM(S!C:B)+SUM(5:5)", by_area),
        "SUM(A$1:A$7)+SUM(S!C$1:B$70)+SUM($A5:$C5)"
    );
}

#[test]
fn referenced_cells_estimate_the_engine_work() {
    assert_eq!(referenced_cells("1+2"), 0);
    assert_eq!(referenced_cells("A1+S!B2"), 2);
    assert_eq!(referenced_cells("SUM(B3:A1)"), 6);
    assert_eq!(referenced_cells("SUM(A:B)"), 2 * 1_048_576);
    assert_eq!(referenced_cells("SUM(1:1)"), 16_384);
    assert_eq!(referenced_cells("SUM(A1:XFD1048576)"), 1_048_576 * 16_384);
}

#[test]
fn file_spelling_round_trip() {
    assert_eq!(
        to_file_spelling("IFS(A1>1,1,TRUE,2)"),
        "_xlfn.IFS(A1>1,1,TRUE,2)"
    );
    assert_eq!(to_file_spelling("_xlfn.IFS(A1>1,1)"), "_xlfn.IFS(A1>1,1)");
    assert_eq!(
        to_file_spelling("filter(A1:A3,A1:A3>0)"),
        "_xlfn._xlws.filter(A1:A3,A1:A3>0)"
    );
    assert_eq!(
        to_file_spelling("SUM(A1)+xlookup(1,A:A,B:B)"),
        "SUM(A1)+_xlfn.xlookup(1,A:A,B:B)"
    );
    assert_eq!(
        to_file_spelling("LET(x,1,y,2,x+y+z)"),
        "_xlfn.LET(_xlpm.x,1,_xlpm.y,2,_xlpm.x+_xlpm.y+z)"
    );
    assert_eq!(
        to_file_spelling("LAMBDA(a,a*2)(3)"),
        "_xlfn.LAMBDA(_xlpm.a,_xlpm.a*2)(3)"
    );
    assert_eq!(
        strip_file_prefixes("_xlfn.LET(_xlpm.x,1,_xlpm.x+1)"),
        "LET(x,1,x+1)"
    );
    assert_eq!(
        strip_file_prefixes("_xlfn._xlws.SORT(A1:A3)"),
        "SORT(A1:A3)"
    );
    assert!(
        FUTURE_FUNCTIONS.windows(2).all(|w| w[0] < w[1]),
        "the list must stay sorted"
    );
}
