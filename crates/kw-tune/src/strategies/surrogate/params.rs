//! [`SurrogateParams`]: the settings of the model-based search (features, initial design,
//! candidates, descent, endgame), with the presets of `surrogate` and `hybrid`.

use crate::strategies::trees::TreeParams;

/// Settings of the model-based search.
#[derive(Clone, Copy, Debug)]
pub struct SurrogateParams {
    /// Random configurations before the model is used.
    pub initial: usize,
    /// Exploration offset of expected improvement, in log units.
    pub xi: f64,
    /// The trees' settings.
    pub trees: TreeParams,
    /// Random candidates per proposal.
    pub random_candidates: usize,
    /// Best points whose neighbourhoods are candidates.
    pub elite: usize,
    /// The best candidates from which the acquisition is hill-climbed.
    pub climb_starts: usize,
    /// Steps of each hill-climb.
    pub climb_steps: usize,
    /// Model-guided descent: propose neighbours of the descent centre while their expected
    /// improvement (log units) exceeds this; `None`: no descent.
    pub descent_threshold: Option<f64>,
    /// Fraction of a bounded budget, at its end, spent on the best predicted neighbours of the
    /// best configuration (0: none).
    pub endgame: f64,
    /// The model's features.
    pub features: Features,
    /// The initial design.
    pub design: Design,
    /// Every `sweep`-th model proposal is the best predicted unvisited neighbour of the best
    /// configuration (0: never).
    pub sweep: usize,
    /// Where two-step neighbourhoods are searched.
    pub two_step: TwoStep,
    /// The endgame pools the near configurations of this many best configurations (1: the
    /// best only).
    pub endgame_elite: usize,
    /// The endgame ranks its pool by one tree drawn at random per proposal (Thompson
    /// sampling) instead of the trees' mean, so that successive endgame picks spread over
    /// the configurations the model cannot tell apart.
    pub endgame_thompson: bool,
    /// The model's targets are the ranks of the results (0 the best, 1 the worst; failures
    /// rank last) instead of log(objective): only the order of the times matters.
    pub rank_targets: bool,
    /// Failed configurations are training samples at the worst value seen (otherwise the
    /// model sees successes only).
    pub model_failures: bool,
}

/// The features a surrogate model sees, each level adding to the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Features {
    /// Value indices only.
    Indices,
    /// Plus log2 of positive numeric values.
    Logs,
    /// Plus pairwise sums of those logs (products of the values).
    LogProducts,
    /// Plus pairwise differences of the logs (ratios of the values).
    LogRatios,
}

/// How the first configurations are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// Uniformly at random.
    Random,
    /// Maximin over normalised value indices.
    Maximin,
}

/// Where two-step neighbourhoods (two parameters changed) are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TwoStep {
    /// Nowhere.
    Never,
    /// In the endgame.
    Endgame,
    /// In the endgame and in the descent (after the one-step neighbourhood has nothing
    /// above the threshold).
    EndgameAndDescent,
}

impl SurrogateParams {
    /// The settings of `surrogate`.
    pub fn surrogate() -> SurrogateParams {
        SurrogateParams {
            initial: 10,
            xi: 0.0,
            trees: TreeParams {
                trees: 24,
                min_split: 3,
                p_categorical: 0.5,
                ..TreeParams::default()
            },
            random_candidates: 200,
            elite: 5,
            climb_starts: 5,
            climb_steps: 10,
            descent_threshold: None,
            endgame: 0.0,
            features: Features::Indices,
            design: Design::Random,
            sweep: 0,
            two_step: TwoStep::Never,
            endgame_elite: 1,
            endgame_thompson: false,
            rank_targets: false,
            model_failures: true,
        }
    }

    /// The settings of `hybrid`.
    pub fn hybrid() -> SurrogateParams {
        SurrogateParams {
            descent_threshold: Some(0.001),
            endgame: 0.2,
            ..SurrogateParams::surrogate()
        }
    }

    /// The settings of `hybrid2`: `hybrid` with log2 value features and a
    /// two-step endgame.
    pub fn hybrid2() -> SurrogateParams {
        SurrogateParams {
            features: Features::Logs,
            two_step: TwoStep::Endgame,
            ..SurrogateParams::hybrid()
        }
    }

    /// The settings of `hybrid3`: `hybrid2` with a longer endgame (30% of the
    /// budget) over the near configurations of the two best, ranked by Thompson sampling, and
    /// 800 random candidates per global proposal.
    pub fn hybrid3() -> SurrogateParams {
        SurrogateParams {
            endgame: 0.3,
            endgame_elite: 2,
            endgame_thompson: true,
            random_candidates: 800,
            ..SurrogateParams::hybrid2()
        }
    }
}
