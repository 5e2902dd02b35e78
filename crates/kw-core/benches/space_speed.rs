//! Tuning-space construction speed on ../shared's synthetic chain (10 x 16 values, 2^40 product,
//! 66,358,828 valid configurations): exact count and 100,000 uniform samples, without listing.
//!
//! Run: `cargo bench -p kw-core --bench space_speed`

use kw_core::kernel_tuner::load_space_spec;
use kw_core::rng::Rng;
use kw_core::space::TuningSpace;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/tuning-spaces");
    let path = dir.join("synthetic_chain_T1.json");
    if !path.exists() {
        eprintln!("SKIPPED: {} not found", path.display());
        return;
    }
    let spec = load_space_spec(&path).expect("synthetic chain loads");
    let mut build = Vec::new();
    let mut space = None;
    for _ in 0..5 {
        let t = Instant::now();
        let s = TuningSpace::new(spec.params.clone(), spec.restrictions.clone()).expect("builds");
        build.push(t.elapsed().as_secs_f64());
        space = Some(s);
    }
    let space = space.expect("built");
    assert_eq!(space.len(), 66_358_828);
    let mut sample = Vec::new();
    for round in 0..5 {
        let mut rng = Rng::new(round);
        let t = Instant::now();
        let mut check = 0u64;
        for _ in 0..100_000 {
            let p = space.sample(&mut rng).expect("non-empty");
            check = check.wrapping_add(p[0] as u64);
        }
        sample.push(t.elapsed().as_secs_f64());
        std::hint::black_box(check);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "synthetic_chain: valid = {} of product {}",
        space.len(),
        space.product()
    );
    println!(
        "count (build + exact count), median of 5: {:.6} s",
        median(&mut build)
    );
    println!(
        "100,000 uniform samples, median of 5:      {:.6} s",
        median(&mut sample)
    );
}
