//! The measured spaces of ../shared/data/tuning-spaces: the space built from a cache file's
//! `tune_params` plus the T1 restrictions holds exactly the cache's configurations.

mod common;

use kw_core::kernel_tuner::{load_restrictions, load_space_spec, CacheFile, Outcome, T1Spec};
use kw_core::space::TuningSpace;
use std::collections::BTreeSet;

fn check(cache: &str, t1: Option<&str>, expected: usize) {
    let Some(dir) = common::shared_spaces() else {
        return;
    };
    let file = CacheFile::load(&dir.join(cache)).unwrap();
    let restrictions = match t1 {
        Some(t1) => {
            let size = (!file.problem_size.is_empty()).then_some(file.problem_size.as_slice());
            load_restrictions(&dir.join(t1), size).unwrap().exprs
        }
        None => Vec::new(),
    };
    let space = TuningSpace::new(file.params.clone(), restrictions).unwrap();
    let from_space: BTreeSet<String> = space.iter().map(|p| space.kt_key(&p)).collect();
    let from_cache: BTreeSet<String> = file.entries.iter().map(|e| e.key.clone()).collect();
    assert_eq!(space.len(), expected as u128, "{cache}: count");
    assert_eq!(
        from_space.len(),
        expected,
        "{cache}: iteration yields each config once"
    );
    assert_eq!(from_cache.len(), expected, "{cache}: cache entries");
    assert_eq!(from_space, from_cache, "{cache}: same key set");
    // Every cache entry's values map to a valid point whose key is the entry's key.
    for e in &file.entries {
        let config = kw_core::config::Config(
            file.params
                .iter()
                .map(|p| p.name.clone())
                .zip(e.values.iter().cloned())
                .collect(),
        );
        let p = space.point(&config).unwrap();
        assert!(space.contains(&p));
        assert_eq!(space.kt_key(&p), e.key);
    }
}

#[test]
fn convolution_a100_matches_its_cache() {
    check(
        "convolution_A100.json.gz",
        Some("convolution_T1.json"),
        4362,
    );
}

#[test]
fn dedispersion_a4000_matches_its_cache() {
    check(
        "dedispersion_A4000.json.gz",
        Some("dedispersion_T1.json"),
        11130,
    );
}

#[test]
fn pnpoly_rtx3090_matches_its_cache() {
    check("pnpoly_RTX_3090.json.gz", None, 4092);
}

#[test]
fn failures_and_optimum_are_read() {
    let Some(dir) = common::shared_spaces() else {
        return;
    };
    let conv = CacheFile::load(&dir.join("convolution_A100.json.gz")).unwrap();
    let failed = conv
        .entries
        .iter()
        .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
        .count();
    assert_eq!(failed, 161);
    assert!(
        (conv.optimum().unwrap() - 0.5536).abs() < 1e-3,
        "{:?}",
        conv.optimum()
    );
    let pn = CacheFile::load(&dir.join("pnpoly_RTX_3090.json.gz")).unwrap();
    let failed = pn
        .entries
        .iter()
        .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
        .count();
    assert_eq!(failed, 330);
}

#[test]
fn t1_values_and_defaults() {
    let Some(dir) = common::shared_spaces() else {
        return;
    };
    let pn = T1Spec::load(&dir.join("pnpoly_T1.json")).unwrap();
    let bsx = &pn.params[1];
    assert_eq!(bsx.name, "block_size_x");
    assert_eq!(bsx.values.len(), 31);
    assert_eq!(bsx.values[30], kw_core::value::Value::Int(992));
    assert_eq!(pn.params[2].values.len(), 11);
    let chain = load_space_spec(&dir.join("synthetic_chain_T1.json")).unwrap();
    let space = TuningSpace::new(chain.params, chain.restrictions).unwrap();
    assert_eq!(space.len(), 66_358_828);
    assert!(
        space.contains(&space.default_point()),
        "the chain's defaults are valid"
    );
}

#[test]
fn small_kernel_tuner_fixtures_load() {
    let Some(dir) = common::shared_spaces() else {
        return;
    };
    for f in [
        "test_cache_file.json",
        "synthetic_fp32_cache_NVIDIA_RTX_A4000.json",
        "test_cache_time_energy.json",
    ] {
        let c = CacheFile::load(&dir.join("small").join(f)).unwrap_or_else(|e| panic!("{e}"));
        assert!(!c.entries.is_empty(), "{f}");
    }
}
