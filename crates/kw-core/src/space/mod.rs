//! [`TuningSpace`]: ordered parameters and restrictions, built the ATF way.
//!
//! Each restriction is checked as soon as the last parameter it mentions is bound, so invalid
//! subtrees are pruned and never listed. On top of that, the number of valid completions of a
//! partial configuration depends only on the values of the bound parameters that later
//! restrictions still mention (its *live* parameters); those counts are memoised per level. This
//! counts spaces of 10^8 valid configurations in milliseconds when restrictions are local (a
//! chain of pairwise constraints keeps 16 states per level), and it gives an exact bijection
//! between valid configurations and `0..len()`, so sampling is uniform and needs no listing.
//!
//! Files: this one the types, the bijection, sampling, neighbours and listing; `build.rs` the
//! construction and counting; `configs.rs` points to and from configurations.
//!
//! ```
//! use kw_core::{expr::Expr, space::TuningSpace, space::Parameter, rng::Rng};
//! let space = TuningSpace::new(
//!     vec![
//!         Parameter::new("bx", [16, 32, 64, 128, 256]),
//!         Parameter::new("by", [1, 2, 4, 8]),
//!     ],
//!     vec![Expr::parse("32 <= bx * by <= 256").unwrap()],
//! ).unwrap();
//! assert_eq!(space.len(), 13);
//! let p = space.sample(&mut Rng::new(1)).unwrap();
//! assert!(space.contains(&p));
//! assert_eq!(space.point_at(space.index_of(&p).unwrap()), Some(p));
//! ```

use crate::eval::{EvalError, Scope};
use crate::expr::{ArgRef, DeviceAttr, Expr};
use crate::rng::Rng;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use thiserror::Error;

mod build;
pub(crate) use build::repeated_values;
pub use build::{BuildWork, BUILD_LIMITS};
mod configs;

/// A configuration as value indices, one per parameter (in parameter order).
pub type Point = Vec<u32>;

/// A tunable parameter: a name, its ordered values and its default value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// Name, as used in expressions and defines.
    pub name: String,
    /// The values, in order (neighbourhoods use this order).
    pub values: Vec<Value>,
    /// The default value (one of `values`).
    pub default: Value,
}

impl Parameter {
    /// The index of `v` among the values: the value itself, else one equal to it as Python
    /// compares numbers ([`Value::same`]: `16.0` is `16`), as a value read from a file is
    /// found (a list may hold both `1` and `1.0`: each finds itself).
    pub fn index_of(&self, v: &Value) -> Option<usize> {
        self.values
            .iter()
            .position(|x| x == v)
            .or_else(|| self.values.iter().position(|x| x.same(v)))
    }

    /// A parameter whose default is its first value.
    pub fn new<V: Into<Value>>(name: &str, values: impl IntoIterator<Item = V>) -> Parameter {
        let values: Vec<Value> = values.into_iter().map(Into::into).collect();
        let default = values.first().cloned().unwrap_or(Value::Int(0));
        Parameter {
            name: name.to_string(),
            values,
            default,
        }
    }

    /// The same parameter with another default.
    pub fn with_default(mut self, default: impl Into<Value>) -> Parameter {
        self.default = default.into();
        self
    }
}

/// Why a tuning space could not be built, or a configuration not be used.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SpaceError {
    /// A parameter with no values.
    #[error("parameter `{0}` has no values")]
    NoValues(String),
    /// Two parameters with one name.
    #[error("parameter `{0}` is declared twice")]
    DuplicateParam(String),
    /// A value listed twice for one parameter.
    #[error("parameter `{param}` lists the value {value} twice")]
    DuplicateValue {
        /// The parameter.
        param: String,
        /// The repeated value.
        value: String,
    },
    /// A default that is not one of the parameter's values.
    #[error("default {value} of parameter `{param}` is not one of its values")]
    DefaultNotListed {
        /// The parameter.
        param: String,
        /// The default.
        value: String,
    },
    /// A restriction that mentions an unknown parameter.
    #[error("restriction `{restriction}` mentions unknown parameter `{name}`{}", .suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownParam {
        /// The restriction, as text.
        restriction: String,
        /// The unknown name.
        name: String,
        /// The closest parameter name.
        suggestion: Option<String>,
    },
    /// A restriction that could not be evaluated for some configuration.
    #[error("restriction `{restriction}` failed for {config}: {source}")]
    Eval {
        /// The restriction, as text.
        restriction: String,
        /// The (partial) configuration it was evaluated for.
        config: String,
        /// Why it failed.
        source: EvalError,
    },
    /// The space has more valid configurations than 2^128.
    #[error("the space is too large to count")]
    TooLarge,
    /// Counting the space would take more than kw allows ([`BUILD_LIMITS`]): restrictions
    /// that relate many parameters leave little to share between partial configurations.
    #[error("the space is too costly to count: {kept} partial configurations and values kept, {evaluations} restriction evaluations, when it stopped ({what}); restrictions over fewer parameters each, or fewer values, make it countable")]
    TooCostly {
        /// Partial configurations and values kept when it stopped.
        kept: u64,
        /// Restriction evaluations when it stopped.
        evaluations: u64,
        /// Which restriction binds the most parameters, as text.
        what: String,
    },
}

/// Which neighbours [`TuningSpace::neighbours`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbourhood {
    /// One parameter changed to any other of its values.
    Hamming,
    /// One parameter moved to the previous or next value in its list.
    Adjacent,
}

#[derive(Debug, Clone)]
struct Node {
    values: Vec<u32>,
    /// Cumulative counts: `ends[i]` = valid completions for `values[0..=i]`.
    ends: Vec<u128>,
}

/// A tuning space: parameters, restrictions and the memoised structure of the valid set.
#[derive(Debug, Clone)]
pub struct TuningSpace {
    params: Vec<Parameter>,
    restrictions: Vec<Expr>,
    by_name: HashMap<String, usize>,
    /// Restrictions (indices) whose last parameter is at this level.
    checks: Vec<Vec<usize>>,
    /// Parameters (indices) bound before level k that restrictions at levels >= k mention.
    live: Vec<Vec<usize>>,
    /// Memo: per level, live values -> node.
    memo: Vec<HashMap<Box<[u32]>, Node>>,
    len: u128,
    /// External values that restrictions may mention (device attributes, problem size, ...).
    external: Externals,
    /// Per parameter, its values indexed ([`TuningSpace::point`] in constant time per value).
    index: Vec<crate::value::ValueIndex>,
}

impl TuningSpace {
    /// The parameters, in order.
    pub fn params(&self) -> &[Parameter] {
        &self.params
    }

    /// The index of `v` among parameter `param`'s values, as [`Parameter::index_of`] finds
    /// it, in constant time (`None` also for a parameter index out of range).
    pub fn value_index(&self, param: usize, v: &Value) -> Option<usize> {
        let p = self.params.get(param)?;
        self.index.get(param)?.index_of(&p.values, v)
    }

    /// The restrictions, as given.
    pub fn restrictions(&self) -> &[Expr] {
        &self.restrictions
    }

    /// The index of parameter `name`.
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The number of configurations without restrictions (the product of the value counts).
    pub fn product(&self) -> u128 {
        self.params
            .iter()
            .try_fold(1u128, |acc, p| acc.checked_mul(p.values.len() as u128))
            .unwrap_or(u128::MAX)
    }

    /// The number of valid configurations.
    pub fn len(&self) -> u128 {
        self.len
    }

    /// True when no configuration satisfies the restrictions.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The valid configuration with this index (`0..len()`), in lexicographic order of value indices.
    pub fn point_at(&self, index: u128) -> Option<Point> {
        if index >= self.len {
            return None;
        }
        let mut point = vec![0u32; self.params.len()];
        let mut rem = index;
        for k in 0..self.params.len() {
            let node = self.node(k, &point)?;
            let i = node.ends.partition_point(|&e| e <= rem);
            if i > 0 {
                rem -= node.ends[i - 1];
            }
            point[k] = *node.values.get(i)?;
        }
        Some(point)
    }

    /// The index of a valid configuration, or `None` if it is not valid.
    pub fn index_of(&self, point: &[u32]) -> Option<u128> {
        if point.len() != self.params.len() || self.len == 0 {
            return None;
        }
        let mut index = 0;
        for k in 0..self.params.len() {
            let node = self.node(k, point)?;
            let i = node.values.binary_search(&point[k]).ok()?;
            if i > 0 {
                index += node.ends[i - 1];
            }
        }
        Some(index)
    }

    /// True when `point` is a valid configuration of this space.
    pub fn contains(&self, point: &[u32]) -> bool {
        self.index_of(point).is_some()
    }

    /// A uniformly random valid configuration (`None` if the space is empty).
    pub fn sample(&self, rng: &mut Rng) -> Option<Point> {
        if self.len == 0 {
            return None;
        }
        self.point_at(rng.below_u128(self.len))
    }

    /// The valid neighbours of `point` (which need not be valid itself).
    pub fn neighbours(&self, point: &[u32], kind: Neighbourhood) -> Vec<Point> {
        let mut out = Vec::new();
        for k in 0..self.params.len().min(point.len()) {
            let n = self.params[k].values.len() as u32;
            let cur = point[k];
            let candidates: Vec<u32> = match kind {
                Neighbourhood::Hamming => (0..n).filter(|&v| v != cur).collect(),
                Neighbourhood::Adjacent => [cur.checked_sub(1), cur.checked_add(1)]
                    .into_iter()
                    .flatten()
                    .filter(|&v| v < n)
                    .collect(),
            };
            for v in candidates {
                let mut p = point.to_vec();
                p[k] = v;
                if self.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// Iterates over all valid configurations in index order.
    pub fn iter(&self) -> impl Iterator<Item = Point> + '_ {
        let mut stack: Vec<usize> = Vec::new();
        let mut point = vec![0u32; self.params.len()];
        let n = self.params.len();
        let mut done = self.len == 0;
        let mut started = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            if n == 0 {
                done = true;
                return Some(Vec::new());
            }
            if !started {
                started = true;
                for k in 0..n {
                    let node = self.node(k, &point).expect("memoised node");
                    point[k] = node.values[0];
                    stack.push(0);
                }
                return Some(point.clone());
            }
            // Advance the deepest level that has a next value, then descend to first values.
            loop {
                let Some(pos) = stack.pop() else {
                    done = true;
                    return None;
                };
                let k = stack.len();
                let node = self.node(k, &point).expect("memoised node");
                if pos + 1 < node.values.len() {
                    point[k] = node.values[pos + 1];
                    stack.push(pos + 1);
                    for j in k + 1..n {
                        let child = self.node(j, &point).expect("memoised node");
                        point[j] = child.values[0];
                        stack.push(0);
                    }
                    return Some(point.clone());
                }
            }
        })
    }
}

/// Snapshot of the non-parameter names a space's restrictions were evaluated with.
#[derive(Debug, Clone, Default)]
struct Externals {
    device: Vec<(DeviceAttr, Value)>,
    /// Per axis; `None` where the scope has no problem size (a restriction that mentions it
    /// is then an evaluation error, never a guess).
    problem_size: Vec<Option<i64>>,
    args: Vec<(ArgRef, Value)>,
}

impl Externals {
    fn capture(exprs: &[Expr], scope: &dyn Scope) -> Externals {
        let mut ext = Externals::default();
        for e in exprs {
            e.visit(&mut |n| match n {
                Expr::Device(a) => {
                    if let Some(v) = scope.device(*a) {
                        ext.device.push((*a, v));
                    }
                }
                Expr::ProblemSize(i) => {
                    while ext.problem_size.len() <= *i {
                        let axis = ext.problem_size.len();
                        ext.problem_size.push(scope.problem_size(axis));
                    }
                }
                Expr::Arg(a) => {
                    if let Some(v) = scope.arg(a) {
                        ext.args.push((a.clone(), v));
                    }
                }
                _ => {}
            });
        }
        ext
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;

    /// A value read from a file finds itself, else its numeric equal: `1.0` and `1` each find
    /// their own in a list holding both, `16.0` finds `16` where only that is declared.
    #[test]
    fn a_value_finds_itself_before_its_numeric_equal() {
        let both = Parameter::new("x", [Value::Int(1), Value::Float(1.0), Value::Int(2)]);
        assert_eq!(both.index_of(&Value::Int(1)), Some(0));
        assert_eq!(both.index_of(&Value::Float(1.0)), Some(1));
        assert_eq!(both.index_of(&Value::Float(2.0)), Some(2));
        let ints = Parameter::new("bx", [16, 32]);
        assert_eq!(ints.index_of(&Value::Float(16.0)), Some(0));
        assert_eq!(ints.index_of(&Value::Float(16.5)), None);
        assert_eq!(ints.index_of(&Value::Str("16".into())), None);
    }
}
