//! Extremely randomised trees (Geurts et al. 2006): the regression model of the
//! model-based strategies. Small, fast to fit on a few hundred points, and its spread over
//! trees gives an uncertainty estimate.
//!
//! Besides random threshold cuts, a node may split on a random subset of the values present
//! (a categorical split): tuning parameters often act like categories (a block size of 32 can
//! be much faster than both 16 and 48). Idea and measurements: the strategy lab
//! (`/work/scratch/strategy-lab`, `surrogate.rs`, `p_cat`), which found that splitting
//! categorically half of the time raised the mean fraction on convolution_A100 at 100
//! evaluations from 0.885 to 0.940.

use kw_core::rng::Rng;

#[derive(Clone, Copy, Debug)]
enum Node {
    Leaf(f64),
    /// Go left when `x[feature] <= threshold` (or, when `mask != 0`, when bit `x[feature]` of
    /// `mask` is set).
    Split {
        feature: u32,
        threshold: f64,
        mask: u64,
        left: u32,
        right: u32,
    },
}

/// An ensemble of extremely randomised regression trees.
#[derive(Clone, Debug, Default)]
pub struct ExtraTrees {
    trees: Vec<Vec<Node>>,
}

/// Fitting settings.
#[derive(Clone, Copy, Debug)]
pub struct TreeParams {
    /// Trees in the ensemble.
    pub trees: usize,
    /// A node with fewer samples becomes a leaf.
    pub min_split: usize,
    /// Random split candidates tried per node (one per feature, up to this many features).
    pub candidates: usize,
    /// Probability that a feature's candidate split is categorical (a random subset of the
    /// values present; features must then be small non-negative integers).
    pub p_categorical: f64,
    /// Only the first `cat_features` features may be split categorically (the others are
    /// real-valued).
    pub cat_features: usize,
}

impl Default for TreeParams {
    fn default() -> TreeParams {
        TreeParams {
            trees: 32,
            min_split: 2,
            candidates: usize::MAX,
            p_categorical: 0.5,
            cat_features: usize::MAX,
        }
    }
}

impl ExtraTrees {
    /// Fits the ensemble to samples `x` (rows of features) and targets `y`.
    pub fn fit(x: &[Vec<f64>], y: &[f64], params: TreeParams, rng: &mut Rng) -> ExtraTrees {
        let mut trees = Vec::with_capacity(params.trees);
        if x.is_empty() {
            return ExtraTrees { trees };
        }
        // Column-major copy: a split scans one feature over many samples.
        let features = x[0].len();
        let cols: Vec<Vec<f64>> = (0..features)
            .map(|f| x.iter().map(|r| r[f]).collect())
            .collect();
        for _ in 0..params.trees {
            let mut nodes = Vec::new();
            let mut idx: Vec<usize> = (0..x.len()).collect();
            build(&cols, y, &mut idx, params, rng, &mut nodes);
            trees.push(nodes);
        }
        ExtraTrees { trees }
    }

    /// Number of trees.
    pub fn len(&self) -> usize {
        self.trees.len()
    }

    /// True when there are no trees.
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// The prediction of tree `t` at `x`.
    pub fn predict_tree(&self, t: usize, x: &[f64]) -> f64 {
        let t = &self.trees[t];
        let mut i = 0usize;
        loop {
            match t[i] {
                Node::Leaf(v) => return v,
                Node::Split {
                    feature,
                    threshold,
                    mask,
                    left,
                    right,
                } => {
                    i = if goes_left(x[feature as usize], threshold, mask) {
                        left as usize
                    } else {
                        right as usize
                    }
                }
            }
        }
    }

    /// Mean and standard deviation of the trees' predictions at `x`.
    pub fn predict(&self, x: &[f64]) -> (f64, f64) {
        if self.trees.is_empty() {
            return (0.0, 1.0);
        }
        let mut sum = 0.0;
        let mut sq = 0.0;
        for t in 0..self.trees.len() {
            let v = self.predict_tree(t, x);
            sum += v;
            sq += v * v;
        }
        let n = self.trees.len() as f64;
        let mean = sum / n;
        (mean, (sq / n - mean * mean).max(0.0).sqrt())
    }
}

#[inline]
fn goes_left(x: f64, threshold: f64, mask: u64) -> bool {
    if mask != 0 {
        (mask >> (x as u64)) & 1 == 1
    } else {
        x <= threshold
    }
}

/// Grows a tree over the samples `idx`; `cols[f][i]` is feature `f` of sample `i`.
fn build(
    cols: &[Vec<f64>],
    y: &[f64],
    idx: &mut [usize],
    params: TreeParams,
    rng: &mut Rng,
    nodes: &mut Vec<Node>,
) -> u32 {
    let me = nodes.len() as u32;
    let n = idx.len();
    let mean = idx.iter().map(|&i| y[i]).sum::<f64>() / n as f64;
    nodes.push(Node::Leaf(mean));
    if n < params.min_split {
        return me;
    }
    let sse = |ids: &[usize]| {
        let m = ids.iter().map(|&i| y[i]).sum::<f64>() / ids.len() as f64;
        ids.iter().map(|&i| (y[i] - m).powi(2)).sum::<f64>()
    };
    let total = sse(idx);
    if total < 1e-12 {
        return me;
    }
    let features = cols.len();
    let mut order: Vec<usize> = (0..features).collect();
    rng.shuffle(&mut order);
    let mut best: Option<(f64, usize, f64, u64)> = None;
    let mut tried = 0;
    for &f in &order {
        if tried >= params.candidates {
            break;
        }
        let col = &cols[f];
        let (lo, hi) = idx
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| {
                (lo.min(col[i]), hi.max(col[i]))
            });
        if hi - lo < 1e-12 {
            continue;
        }
        tried += 1;
        // A random cut strictly between the smallest and largest value, or a random subset.
        let threshold = lo + (hi - lo) * (0.001 + 0.998 * rng.f64());
        let mut mask = 0u64;
        if f < params.cat_features && lo >= 0.0 && hi < 64.0 && rng.chance(params.p_categorical) {
            let present = idx.iter().fold(0u64, |m, &i| m | 1u64 << (col[i] as u64));
            for _ in 0..8 {
                let m = present & rng.next_u64();
                if m != 0 && m != present {
                    mask = m;
                    break;
                }
            }
        }
        let (mut nl, mut sl, mut ql, mut nr, mut sr, mut qr) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for &i in idx.iter() {
            if goes_left(col[i], threshold, mask) {
                nl += 1.0;
                sl += y[i];
                ql += y[i] * y[i];
            } else {
                nr += 1.0;
                sr += y[i];
                qr += y[i] * y[i];
            }
        }
        if nl == 0.0 || nr == 0.0 {
            continue;
        }
        let score = (ql - sl * sl / nl) + (qr - sr * sr / nr);
        if best.is_none_or(|(s, _, _, _)| score < s) {
            best = Some((score, f, threshold, mask));
        }
    }
    let Some((_, f, threshold, mask)) = best else {
        return me;
    };
    // Partition idx in place: left part first.
    let mut split = 0;
    for k in 0..n {
        if goes_left(cols[f][idx[k]], threshold, mask) {
            idx.swap(k, split);
            split += 1;
        }
    }
    let (l, r) = idx.split_at_mut(split);
    let left = build(cols, y, l, params, rng, nodes);
    let right = build(cols, y, r, params, rng, nodes);
    nodes[me as usize] = Node::Split {
        feature: f as u32,
        threshold,
        mask,
        left,
        right,
    };
    me
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_step_and_a_slope() {
        let mut rng = Rng::new(3);
        let x: Vec<Vec<f64>> = (0..60)
            .map(|i| vec![(i % 10) as f64, (i / 10) as f64])
            .collect();
        let y: Vec<f64> = x
            .iter()
            .map(|r| if r[0] < 5.0 { 1.0 } else { 3.0 } + 0.1 * r[1])
            .collect();
        let m = ExtraTrees::fit(&x, &y, TreeParams::default(), &mut rng);
        let (a, _) = m.predict(&[2.0, 0.0]);
        let (b, _) = m.predict(&[8.0, 5.0]);
        assert!((a - 1.0).abs() < 0.3, "{a}");
        assert!((b - 3.5).abs() < 0.3, "{b}");
    }
}
