//! How much a prior's sources agree with each other: the least, over pairs of sources, of the
//! Spearman rank correlation of their results on the configurations both measured. Measured on
//! the prior alone (never on the space being tuned): sources that rank the same kernel's
//! configurations alike on every pair of devices suggest a landscape that transfers; one pair
//! that disagrees shows that the landscape can change from one device to the next, and the
//! device being tuned may differ from all of them. The least pair, not the mean: a family of
//! several alike devices and one unlike them is not a landscape that transfers.
//!
//! Used, when asked, to scale how far a prior is trusted ([`super::PriorParams::agree`],
//! [`super::PriorParams::agree_take`]).

use kw_core::space::Point;
use std::collections::HashMap;

/// Pairs of sources with fewer configurations measured by both are not compared.
pub const MIN_COMMON: usize = 8;

/// The least over pairs of sources (each: its successful results, by point) of the Spearman
/// rank correlation on their common points, in -1..=1; `None` when no pair has
/// [`MIN_COMMON`] common points (one source, a wisdom record per source, disjoint sources).
pub fn agreement(sources: &[HashMap<Point, f64>]) -> Option<f64> {
    let mut least: Option<f64> = None;
    for (i, a) in sources.iter().enumerate() {
        for b in &sources[i + 1..] {
            let mut common: Vec<(f64, f64)> = a
                .iter()
                .filter_map(|(p, va)| b.get(p).map(|vb| (*va, *vb)))
                .collect();
            if common.len() < MIN_COMMON {
                continue;
            }
            // A fixed order, so that ties rank the same on every run.
            common.sort_by(|x, y| x.0.total_cmp(&y.0).then_with(|| x.1.total_cmp(&y.1)));
            let xs: Vec<f64> = common.iter().map(|c| c.0).collect();
            let ys: Vec<f64> = common.iter().map(|c| c.1).collect();
            if let Some(r) = spearman(&xs, &ys) {
                least = Some(least.map_or(r, |l: f64| l.min(r)));
            }
        }
    }
    least
}

/// The Spearman rank correlation of two equally long samples (ties get their mean rank);
/// `None` when either is constant.
pub fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let (rx, ry) = (ranks(xs), ranks(ys));
    let n = rx.len() as f64;
    let mean = (n - 1.0) / 2.0;
    let (mut num, mut dx, mut dy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        num += (a - mean) * (b - mean);
        dx += (a - mean) * (a - mean);
        dy += (b - mean) * (b - mean);
    }
    (dx > 0.0 && dy > 0.0).then(|| num / (dx * dy).sqrt())
}

/// Ranks from 0, ties sharing their mean rank.
fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut out = vec![0.0; xs.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && xs[order[end]] == xs[order[start]] {
            end += 1;
        }
        let rank = (start + end - 1) as f64 / 2.0;
        for &k in &order[start..end] {
            out[k] = rank;
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(values: impl IntoIterator<Item = (u32, f64)>) -> HashMap<Point, f64> {
        values.into_iter().map(|(k, v)| (vec![k], v)).collect()
    }

    #[test]
    fn sources_ranking_alike_agree_and_reversed_ones_disagree() {
        let a = source((0..20).map(|k| (k, 1.0 + k as f64)));
        // Same order, other scale (another, slower device).
        let b = source((0..20).map(|k| (k, 3.0 * (1.0 + k as f64).powi(2))));
        let reversed = source((0..20).map(|k| (k, 100.0 - k as f64)));
        let same = agreement(&[a.clone(), b.clone()]).expect("20 common points");
        assert!((same - 1.0).abs() < 1e-12, "{same}");
        let opposite = agreement(&[a.clone(), reversed.clone()]).expect("20 common points");
        assert!((opposite + 1.0).abs() < 1e-12, "{opposite}");
        // Three sources: the least of the three pairs (1, -1, -1); two alike sources do not
        // hide the third.
        let three = agreement(&[a.clone(), b.clone(), reversed]).expect("pairs");
        assert!((three + 1.0).abs() < 1e-12, "{three}");
        let partial = source((0..20).map(|k| (k, if k % 4 == 0 { 100.0 } else { k as f64 })));
        let with_partial = agreement(&[a.clone(), b, partial.clone()]).expect("pairs");
        let alone = agreement(&[a, partial]).expect("pair");
        assert!(with_partial < 1.0 && with_partial > 0.0, "{with_partial}");
        assert!(
            (with_partial - alone).abs() < 1e-12,
            "{with_partial} {alone}"
        );
    }

    #[test]
    fn only_common_points_count_and_too_few_are_no_evidence() {
        let a = source((0..20).map(|k| (k, k as f64)));
        // Agrees with `a` on 10..20, and has points `a` lacks that rank oppositely.
        let b = source(
            (10..20)
                .map(|k| (k, k as f64))
                .chain((100..140).map(|k| (k, -(k as f64)))),
        );
        assert!((agreement(&[a.clone(), b]).expect("10 common") - 1.0).abs() < 1e-12);
        let few = source((0..MIN_COMMON as u32 - 1).map(|k| (k, k as f64)));
        assert_eq!(agreement(&[a.clone(), few]), None);
        assert_eq!(agreement(&[a]), None);
        assert_eq!(agreement(&[]), None);
    }

    #[test]
    fn ties_share_their_rank_and_constant_sources_are_skipped() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![2.5, 0.0, 2.5, 1.0]);
        let a = source((0..10).map(|k| (k, k as f64)));
        let flat = source((0..10).map(|k| (k, 1.0)));
        assert_eq!(agreement(&[a, flat]), None);
        // A partial agreement lies strictly between.
        let r = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 3.0, 5.0, 4.0]).expect("r");
        assert!(r > 0.0 && r < 1.0, "{r}");
        assert!((r - 0.8).abs() < 1e-12, "{r}");
    }
}
