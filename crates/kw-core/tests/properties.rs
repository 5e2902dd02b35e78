//! Property tests: expression round trips, and tuning spaces against brute force.

use kw_core::eval::Scope;
use kw_core::expr::{ArgRef, BinaryOp, DeviceAttr, Func, UnaryOp};
use kw_core::rng::Rng;
use kw_core::space::{Neighbourhood, Parameter};
use kw_core::{expr::Expr, space::TuningSpace, value::Value};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (-1000i64..1000).prop_map(|i| Expr::Lit(Value::Int(i))),
        prop_oneof![Just(i64::MIN), Just(i64::MAX)].prop_map(|i| Expr::Lit(Value::Int(i))),
        (-1.0e6f64..1.0e6).prop_map(|f| Expr::Lit(Value::Float(f))),
        any::<bool>().prop_map(|b| Expr::Lit(Value::Bool(b))),
        "[a-z ]{0,6}".prop_map(|s| Expr::Lit(Value::Str(s))),
        "[a-z][a-z0-9_]{0,5}"
            .prop_filter("keyword", |s| !matches!(
                s.as_str(),
                "and" | "or" | "not" | "if" | "else" | "true" | "false" | "for" | "in"
            ))
            .prop_map(Expr::Param),
        (0usize..4).prop_map(|i| Expr::Arg(ArgRef::Index(i))),
        "[a-z][a-z0-9]{0,4}".prop_map(|s| Expr::Arg(ArgRef::Name(s))),
        (0usize..3).prop_map(Expr::ProblemSize),
        (0usize..DeviceAttr::ALL.len()).prop_map(|i| Expr::Device(DeviceAttr::ALL[i])),
    ]
}

const BINOPS: [BinaryOp; 20] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::FloorDiv,
    BinaryOp::Mod,
    BinaryOp::Pow,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::Shl,
    BinaryOp::Shr,
];

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            (0..3usize, inner.clone()).prop_map(|(i, e)| Expr::unary(
                [UnaryOp::Neg, UnaryOp::Not, UnaryOp::BitNot][i],
                e
            )),
            (0..BINOPS.len(), inner.clone(), inner.clone())
                .prop_map(|(i, a, b)| Expr::binary(BINOPS[i], a, b)),
            (0..Func::ALL.len(), prop::collection::vec(inner, 4)).prop_map(|(i, mut args)| {
                let f = Func::ALL[i];
                let (lo, hi) = f.arity();
                args.truncate(hi.min(3).max(lo));
                Expr::call(f, args)
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn json_round_trip(e in expr()) {
        let text = serde_json::to_string(&e).unwrap();
        let back: Expr = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, e);
    }

    #[test]
    fn parse_print_round_trip(e in expr()) {
        let text = e.to_string();
        let back = Expr::parse(&text).map_err(|err| TestCaseError::fail(format!("{err}")))?;
        prop_assert_eq!(back, e);
    }

    #[test]
    fn evaluation_never_panics(e in expr()) {
        let _ = e.eval(&kw_core::eval::EmptyScope);
    }
}

/// A random small space: 1-4 parameters with 1-4 distinct values, 0-3 random constraints.
fn small_space() -> impl Strategy<Value = (Vec<Parameter>, Vec<Expr>)> {
    let params =
        prop::collection::vec(prop::collection::btree_set(-3i64..9, 1..5), 1..5).prop_map(|sets| {
            sets.into_iter()
                .enumerate()
                .map(|(i, s)| Parameter::new(&format!("p{i}"), s.into_iter().rev()))
                .collect::<Vec<_>>()
        });
    params.prop_flat_map(|params| {
        let n = params.len();
        let term = (0..n, 0..n, 0usize..3).prop_map(|(a, b, op)| {
            let (a, b) = (Expr::Param(format!("p{a}")), Expr::Param(format!("p{b}")));
            match op {
                0 => a + b,
                1 => a - b,
                _ => a * b,
            }
        });
        let constraint = (term, 0usize..4, -6i64..12).prop_map(|(t, cmp, c)| match cmp {
            0 => t.lt(c),
            1 => t.ge(c),
            2 => t.ne_(c),
            _ => t.le(c).or(Expr::Param("p0".into()).eq_(1)),
        });
        (Just(params), prop::collection::vec(constraint, 0..4))
    })
}

struct Assignment<'a>(&'a HashMap<String, Value>);
impl Scope for Assignment<'_> {
    fn param(&self, name: &str) -> Option<Value> {
        self.0.get(name).cloned()
    }
}

fn brute_force(params: &[Parameter], restrictions: &[Expr]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut point = vec![0u32; params.len()];
    loop {
        let map: HashMap<String, Value> = params
            .iter()
            .zip(&point)
            .map(|(p, &i)| (p.name.clone(), p.values[i as usize].clone()))
            .collect();
        if restrictions
            .iter()
            .all(|r| r.eval_bool(&Assignment(&map)).unwrap())
        {
            out.push(point.clone());
        }
        let mut k = params.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            point[k] += 1;
            if (point[k] as usize) < params[k].values.len() {
                break;
            }
            point[k] = 0;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn space_agrees_with_brute_force((params, restrictions) in small_space(), seed in 0u64..1000) {
        let space = TuningSpace::new(params.clone(), restrictions.clone()).unwrap();
        let expected = brute_force(&params, &restrictions);
        prop_assert_eq!(space.len(), expected.len() as u128);
        // Iteration lists exactly the valid configurations, in index (lexicographic) order.
        let listed: Vec<Vec<u32>> = space.iter().collect();
        prop_assert_eq!(&listed, &expected);
        for (i, p) in expected.iter().enumerate() {
            prop_assert_eq!(space.point_at(i as u128), Some(p.clone()));
            prop_assert_eq!(space.index_of(p), Some(i as u128));
        }
        prop_assert_eq!(space.point_at(expected.len() as u128), None);
        let valid: BTreeSet<&Vec<u32>> = expected.iter().collect();
        // contains() and neighbours() agree with the brute-force set.
        let product: Vec<Vec<u32>> = brute_force(&params, &[]);
        for p in &product {
            prop_assert_eq!(space.contains(p), valid.contains(p));
            for kind in [Neighbourhood::Hamming, Neighbourhood::Adjacent] {
                for q in space.neighbours(p, kind) {
                    prop_assert!(valid.contains(&q));
                    let diff: Vec<usize> = (0..p.len()).filter(|&k| p[k] != q[k]).collect();
                    prop_assert_eq!(diff.len(), 1);
                    if kind == Neighbourhood::Adjacent {
                        prop_assert_eq!(p[diff[0]].abs_diff(q[diff[0]]), 1);
                    }
                }
            }
        }
        // Sampling hits every valid configuration with near-uniform frequency.
        if !expected.is_empty() {
            let mut rng = Rng::new(seed);
            let per = 400usize;
            let mut counts: HashMap<Vec<u32>, usize> = HashMap::new();
            for _ in 0..per * expected.len() {
                let p = space.sample(&mut rng).unwrap();
                *counts.entry(p).or_default() += 1;
            }
            prop_assert_eq!(counts.len(), expected.len());
            for c in counts.values() {
                // 400 expected per configuration: 6 standard deviations is about +-120.
                prop_assert!((280..=520).contains(c), "count {} of {} expected", c, per);
            }
        } else {
            prop_assert!(space.sample(&mut Rng::new(seed)).is_none());
        }
    }
}
