//! A prior's sources' agreement (`kw_tune::prior::agreement`) scales how long the prior is
//! trusted (`agree=K`) and how many of its configurations are taken (`agreetake=1`): sources
//! that rank the space alike are trusted longer, and one unlike source is enough to withdraw
//! that trust.

mod common;

use common::{small_objective, small_space};
use kw_core::space::TuningSpace;
use kw_tune::prior::{self, PriorParams, PriorShare, PriorSource, TrustSettings};

/// A source measuring every valid point of `space` with `f` of the small objective.
fn source(space: &TuningSpace, label: &str, f: impl Fn(f64) -> f64) -> PriorSource {
    PriorSource {
        device: String::new(),
        kernel: String::new(),
        problem_size: Vec::new(),
        label: label.into(),
        results: space
            .iter()
            .map(|p| (space.config(&p), small_objective(space, &p).ok().map(&f)))
            .collect(),
    }
}

fn patience(share: PriorShare) -> usize {
    match share {
        PriorShare::Trust(TrustSettings { patience, .. }) => patience,
        other => panic!("not trust: {other:?}"),
    }
}

#[test]
fn agreeing_sources_are_trusted_longer_and_one_unlike_source_withdraws_it() {
    let space = small_space();
    // Two devices ranking the configurations alike (one 3 times slower, squared), and one
    // ranking them in reverse.
    let fast = source(&space, "fast", |v| v);
    let slow = source(&space, "slow", |v| 3.0 * v * v);
    let unlike = source(&space, "unlike", |v| 100.0 - v);
    let params = PriorParams::parse("take=6:share=mix1:agree=8").expect("parse");
    assert_eq!(params.agree, 8);

    let alike = prior::map(&[fast.clone(), slow.clone()], &space, params);
    let a = alike.agreement.expect("two sources over the same points");
    assert!((a - 1.0).abs() < 1e-9, "{a}");
    assert_eq!(patience(alike.share), 1 + 8);
    assert_eq!(alike.points.len(), 6);

    let mixed = prior::map(&[fast.clone(), slow.clone(), unlike], &space, params);
    assert!(mixed.agreement.expect("pairs") < -0.9);
    assert_eq!(
        patience(mixed.share),
        1,
        "one unlike source: no extra trust"
    );

    // Off by default: the patience is the setting's, whatever the agreement.
    let default = prior::map(&[fast.clone(), slow], &space, PriorParams::default());
    assert_eq!(default.share, PriorParams::default().share);

    // One source: agreement unknown, nothing scaled.
    let one = prior::map(std::slice::from_ref(&fast), &space, params);
    assert_eq!(one.agreement, None);
    assert_eq!(patience(one.share), 1);
}

#[test]
fn agreement_scales_the_configurations_taken() {
    let space = small_space();
    let fast = source(&space, "fast", |v| v);
    let slow = source(&space, "slow", |v| 3.0 * v * v);
    // Half the sources' ranking shuffled: a partial agreement.
    let partial = PriorSource {
        label: "partial".into(),
        kernel: String::new(),
        device: String::new(),
        problem_size: Vec::new(),
        results: fast
            .results
            .iter()
            .enumerate()
            .map(|(k, (c, v))| (c.clone(), v.map(|v| if k % 2 == 0 { v } else { 50.0 - v })))
            .collect(),
    };
    let params = PriorParams::parse("take=12:agreetake=1").expect("parse");
    assert!(params.agree_take);
    let all = prior::map(&[fast.clone(), slow], &space, params);
    assert_eq!(all.points.len(), 12, "full agreement: all taken");
    let some = prior::map(&[fast, partial], &space, params);
    let a = some.agreement.expect("pair");
    assert!(a > 0.0 && a < 0.9, "{a}");
    assert_eq!(some.points.len(), ((12.0 * a).round() as usize).max(2));
    assert!(PriorParams::parse("agree=x").is_err());
    // A setting given twice is refused (the last one used to win silently), `local` and
    // `localmix` being one setting.
    for text in ["take=3:take=4", "local=3:local=2", "agree=8,agree=8"] {
        let e = PriorParams::parse(text).unwrap_err();
        assert!(e.contains("is given twice"), "{text}: {e}");
    }
    let e = PriorParams::parse("local=3:localmix=2").unwrap_err();
    assert!(e.contains("set one thing"), "{e}");
}
