//! The JSON form of expressions is a contract: stored fixtures must keep loading, and mean
//! what their text means.

use kw_core::expr::Expr;

#[test]
fn stored_expression_fixtures_load_and_match_their_text() {
    let text = include_str!("fixtures/expressions_v1.json");
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc["version"], kw_core::expr::EXPR_FORMAT_VERSION);
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let from_json: Expr = serde_json::from_value(case["json"].clone()).unwrap();
        let from_text = Expr::parse(case["text"].as_str().unwrap()).unwrap();
        assert_eq!(from_json, from_text, "{}", case["text"]);
        assert_eq!(serde_json::to_value(&from_json).unwrap(), case["json"]);
    }
}
