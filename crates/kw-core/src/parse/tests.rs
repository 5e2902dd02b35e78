//! Tests of the expression parser.

use super::*;
use crate::expr::{lit, param, DeviceAttr};

#[test]
fn precedence_and_python_forms() {
    let p = |s: &str| parse(s).unwrap();
    assert_eq!(p("1 + 2 * 3"), lit(1) + lit(2) * lit(3));
    assert_eq!(p("-2 ** 2"), -(lit(2).pow(2)));
    assert_eq!(p("2 ** -1"), lit(2).pow(-1));
    assert_eq!(
        p("a and not b or c"),
        param("a").and(!param("b")).or(param("c"))
    );
    assert_eq!(p("a && !b || c"), p("a and not b or c"));
    assert_eq!(
        p("32 <= x * y <= 1024"),
        lit(32)
            .le(param("x") * param("y"))
            .and((param("x") * param("y")).le(1024))
    );
    assert_eq!(p("x // 2"), param("x").floor_div(2));
    assert_eq!(
        p("a if c else b"),
        crate::expr::ifelse(param("c"), param("a"), param("b"))
    );
    assert_eq!(p("problem_size.y"), Expr::ProblemSize(1));
    assert_eq!(
        p("args[2] + args.n"),
        crate::expr::arg_at(2) + crate::expr::arg("n")
    );
    assert_eq!(p("device.warp_size"), Expr::Device(DeviceAttr::WarpSize));
    assert_eq!(p(r#"'a\'b' + "c""#), lit("a'b") + lit("c"));
}

#[test]
fn errors_name_the_position() {
    let e = parse("a + * b").unwrap_err();
    assert_eq!(
        (e.column, e.message.as_str()),
        (5, "expected a value, found `*`")
    );
    let e = parse("(a + b").unwrap_err();
    assert_eq!(e.column, 7);
    let e = parse("minn(a, b)").unwrap_err();
    assert!(e.message.contains("did you mean `min`"), "{e}");
    let e = parse("device.warpsize").unwrap_err();
    assert!(e.message.contains("warp_size"), "{e}");
    assert_eq!(parse("a $ b").unwrap_err().column, 3);
    assert!(parse("'abc").is_err());
    assert!(parse("99999999999999999999").is_err());
    assert!(parse("").is_err());
    assert!(parse("div_ceil(1)").is_err());
    // A function is named as written: `ifelse` is `select` by another name.
    let e = parse("ifelse(1, 2)").unwrap_err();
    assert_eq!(e.message, "`ifelse` takes 3 argument(s), got 2");
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
    assert!(parse(&"-".repeat(100_000)).is_err());
    assert!(parse(&"not ".repeat(100_000)).is_err());
}

#[test]
fn min_int_literal() {
    assert_eq!(parse("-9223372036854775808").unwrap(), lit(i64::MIN));
}

/// A flat `or` / `and` chain past the depth a left-grouped tree allows (a condition listing
/// 48+ allowed values) parses as a balanced tree with the same value; a short one keeps its
/// left grouping (and so its printed form and every space hash made from it).
#[test]
fn long_logic_chains_parse_balanced_and_errors_quote_an_excerpt() {
    use crate::eval::Scope;
    use crate::value::Value;
    struct A(i64);
    impl Scope for A {
        fn param(&self, name: &str) -> Option<Value> {
            (name == "a").then_some(Value::Int(self.0))
        }
    }
    let chain: Vec<String> = (0..300).map(|i| format!("a == {}", 3 * i)).collect();
    let e = parse(&chain.join(" or ")).unwrap();
    assert!(crate::parse::tree_depth(&e) <= crate::parse::MAX_TREE_DEPTH);
    assert_eq!(e.eval_bool(&A(897)), Ok(true));
    assert_eq!(e.eval_bool(&A(898)), Ok(false));
    assert_eq!(e.eval(&A(0)), Ok(Value::Bool(true)));
    // Printed and read back: the same tree.
    assert_eq!(parse(&e.to_string()).unwrap(), e);
    let and = parse(&vec!["a"; 100].join(" and ")).unwrap();
    assert_eq!(and.eval(&A(5)), Ok(Value::Bool(true)));
    assert_eq!(
        parse("a or a or a").unwrap().to_string(),
        "((a || a) || a)",
        "short chains are grouped from the left, as before"
    );
    // An error in a long text quotes the part around it, not all of it.
    let long = format!("{} +", chain.join(" or "));
    let m = parse(&long).unwrap_err().to_string();
    assert!(m.len() < 400, "{m}");
    assert!(m.contains("`...") && m.contains("a == 897 +`"), "{m}");
}

/// Nested chained comparisons write their middle operands twice, and so does a comparison
/// followed by `in` (`a < b in [1]` is `a < b and b in [1]`): 22 levels of either made tens
/// of millions of nodes (30 s, 2 GB) from under 300 characters; refused past 100,000 now.
#[test]
fn operands_written_twice_are_counted_before_they_are() {
    for (open, close) in [("a < (", ") < c"), ("a < (", ") in [1]")] {
        let mut text = "b".to_string();
        for _ in 0..24 {
            text = format!("{open}{text}{close}");
        }
        let e = parse(&text).unwrap_err();
        assert!(e.to_string().contains("expression too large"), "{e}");
        // A few levels are fine, and read back.
        let small = format!("{open}{open}b{close}{close}");
        let tree = parse(&small).unwrap();
        assert_eq!(parse(&tree.to_string()).unwrap(), tree);
    }
}

/// `sum` of a long list is grouped balanced, as a long `or` chain is, not refused as too deep.
#[test]
fn the_sum_of_a_long_list_reads() {
    let items: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let e = parse(&format!("sum([{}])", items.join(", "))).unwrap();
    assert_eq!(
        e.eval(&crate::eval::EmptyScope).unwrap(),
        crate::value::Value::Int(5050)
    );
    assert_eq!(parse(&e.to_string()).unwrap(), e);
}

/// List and set comprehensions, as Kernel Tuner restrictions write them (`x in [2**i for i in
/// range(7, 9)]`): the iterable a list of constants, each value put for the loop variable
/// (which hides a parameter of its name, as in Python); the element may name parameters,
/// the filter may not.
#[test]
fn comprehensions_are_written_out() {
    use crate::eval::Scope;
    use crate::value::Value;
    struct A(i64);
    impl Scope for A {
        fn param(&self, name: &str) -> Option<Value> {
            matches!(name, "a" | "i").then_some(Value::Int(self.0))
        }
    }
    let e = parse("a in [2**i for i in range(7, 9)]").unwrap();
    assert_eq!(e.eval_bool(&A(128)), Ok(true));
    assert_eq!(e.eval_bool(&A(256)), Ok(true));
    assert_eq!(e.eval_bool(&A(64)), Ok(false));
    assert_eq!(e.eval_bool(&A(512)), Ok(false));
    // The element names a parameter; a filter; a set; nested iterables; sum and len.
    let e = parse("sum([a * i for i in [1, 2, 3] if i != 2]) == 4 * a").unwrap();
    assert_eq!(e.eval_bool(&A(5)), Ok(true));
    let e = parse("a not in {i * 3 for i in [j + 1 for j in range(3)]}").unwrap();
    assert_eq!(e.eval_bool(&A(6)), Ok(false));
    assert_eq!(e.eval_bool(&A(7)), Ok(true));
    assert_eq!(
        parse("len([0 for i in range(5) if i % 2 == 0])")
            .unwrap()
            .eval(&A(0)),
        Ok(Value::Int(3))
    );
    assert_eq!(
        parse("max([a - i for i in range(4)])")
            .unwrap()
            .eval(&A(10)),
        Ok(Value::Int(10))
    );
    // Errors: a filter over a parameter; an iterable that is not constant; too many items.
    let m = parse("a in [i for i in range(9) if i < a]")
        .unwrap_err()
        .to_string();
    assert!(m.contains("filter must be a constant"), "{m}");
    let m = parse("a in [i for i in [a, 2]]").unwrap_err().to_string();
    assert!(m.contains("iterable must be a list of constants"), "{m}");
    let m = parse("a in [i for i in range(20000)]")
        .unwrap_err()
        .to_string();
    assert!(m.contains("at most 10000"), "{m}");
    // A comprehension in the element multiplies: bounded as a whole (3,000 x 3,000 items
    // took 17 s and 1.8 GB before).
    let m = parse("a in [sum([j * i for j in range(3000)]) for i in range(3000)]")
        .unwrap_err()
        .to_string();
    assert!(m.contains("more than 100000 operations"), "{m}");
    // Messages quote such an expression's start, not its 100 KB written out.
    let long = parse("a in [i for i in range(5000)]").unwrap();
    assert!(long.to_string().len() > 20_000);
    let q = long.quoted();
    assert!(
        q.len() <= 203 && q.ends_with("...") && q.starts_with("is_in(a, 0, 1"),
        "{q}"
    );
    assert_eq!(parse("a + 1").unwrap().quoted(), "(a + 1)");
}
