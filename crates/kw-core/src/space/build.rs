//! Building a [`TuningSpace`] the ATF way: each restriction checked as soon as its last
//! parameter is bound, counts of valid completions memoised per level of live parameters.

use super::{Externals, Node, Parameter, Point, SpaceError, TuningSpace};
use crate::did_you_mean::closest;
use crate::eval::{EmptyScope, Scope};
use crate::expr::{ArgRef, DeviceAttr, Expr};
use crate::value::Value;
use std::collections::HashMap;

/// What counting a space may take: values kept in the memo of partial configurations (about
/// 20 bytes each: this bounds the memory near 1 GiB), and restriction evaluations (0.1-0.3
/// µs each: about two minutes on one core). The published spaces take far less (hotspot's 4.4 million
/// configurations, 82,984 valid: well under a second).
pub const BUILD_LIMITS: BuildWork = BuildWork {
    kept: 30_000_000,
    evaluations: 1_000_000_000,
};

/// Work counted while a space is counted ([`BUILD_LIMITS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildWork {
    /// Partial configurations and values kept in the memo.
    pub kept: u64,
    /// Restriction evaluations.
    pub evaluations: u64,
}

/// Scope over a (partial) assignment of value indices.
struct Bound<'a> {
    space: &'a TuningSpace,
    point: &'a [u32],
    upto: usize,
}

impl Scope for Bound<'_> {
    fn param(&self, name: &str) -> Option<Value> {
        let i = *self.space.by_name.get(name)?;
        (i < self.upto).then(|| self.space.params[i].values[self.point[i] as usize].clone())
    }
    fn param_names(&self) -> Vec<String> {
        self.space.params.iter().map(|p| p.name.clone()).collect()
    }
    fn arg(&self, arg: &ArgRef) -> Option<Value> {
        let ext = &self.space.external.args;
        ext.iter().find(|(a, _)| a == arg).map(|(_, v)| v.clone())
    }
    fn problem_size(&self, axis: usize) -> Option<i64> {
        self.space
            .external
            .problem_size
            .get(axis)
            .copied()
            .flatten()
    }
    fn device(&self, attr: DeviceAttr) -> Option<Value> {
        let ext = &self.space.external.device;
        ext.iter().find(|(a, _)| *a == attr).map(|(_, v)| v.clone())
    }
}

impl TuningSpace {
    /// Builds a space whose restrictions mention only parameters and constants.
    pub fn new(params: Vec<Parameter>, restrictions: Vec<Expr>) -> Result<TuningSpace, SpaceError> {
        TuningSpace::with_scope(params, restrictions, &EmptyScope)
    }

    /// Builds a space whose restrictions may also mention device attributes, the problem size
    /// or arguments, resolved through `scope` (e.g. `bx * by <= device.max_threads_per_block`).
    pub fn with_scope(
        params: Vec<Parameter>,
        restrictions: Vec<Expr>,
        scope: &dyn Scope,
    ) -> Result<TuningSpace, SpaceError> {
        TuningSpace::with_limits(params, restrictions, scope, BUILD_LIMITS)
    }

    /// [`TuningSpace::with_scope`] counting under `limits` instead of [`BUILD_LIMITS`]
    /// ([`SpaceError::TooCostly`] past them).
    pub fn with_limits(
        params: Vec<Parameter>,
        restrictions: Vec<Expr>,
        scope: &dyn Scope,
        limits: BuildWork,
    ) -> Result<TuningSpace, SpaceError> {
        let mut by_name = HashMap::new();
        for (i, p) in params.iter().enumerate() {
            if p.values.is_empty() {
                return Err(SpaceError::NoValues(p.name.clone()));
            }
            if by_name.insert(p.name.clone(), i).is_some() {
                return Err(SpaceError::DuplicateParam(p.name.clone()));
            }
            if let Some(v) = repeated_values(&p.values).next() {
                return Err(SpaceError::DuplicateValue {
                    param: p.name.clone(),
                    value: v.to_string(),
                });
            }
            if !p.values.contains(&p.default) {
                return Err(SpaceError::DefaultNotListed {
                    param: p.name.clone(),
                    value: p.default.to_string(),
                });
            }
        }
        let n = params.len();
        // The level of a restriction is its last parameter; constant ones are checked first.
        let mut checks = vec![Vec::new(); n];
        let mut constant = Vec::new();
        let mut last_use = vec![None::<usize>; n];
        for (ri, r) in restrictions.iter().enumerate() {
            let mut level = None;
            for name in r.params() {
                let i = *by_name.get(name).ok_or_else(|| SpaceError::UnknownParam {
                    restriction: r.quoted(),
                    name: name.to_string(),
                    suggestion: closest(name, params.iter().map(|p| p.name.as_str())),
                })?;
                level = level.max(Some(i));
            }
            match level {
                Some(l) => {
                    checks[l].push(ri);
                    for name in r.params() {
                        let i = by_name[name];
                        last_use[i] = last_use[i].max(Some(l));
                    }
                }
                None => constant.push(ri),
            }
        }
        let live = (0..n)
            .map(|k| {
                (0..k)
                    .filter(|&j| last_use[j].is_some_and(|l| l >= k))
                    .collect()
            })
            .collect();
        let external = Externals::capture(&restrictions, scope);
        let index = params
            .iter()
            .map(|p| crate::value::ValueIndex::new(&p.values))
            .collect();
        let mut space = TuningSpace {
            index,
            params,
            restrictions,
            by_name,
            checks,
            live,
            memo: vec![HashMap::new(); n],
            len: 0,
            external,
        };
        let empty: Point = vec![0; n];
        let mut unevaluable = None;
        for &ri in &constant {
            match space.check(ri, &empty, 0) {
                Ok(true) => {}
                Ok(false) => return Ok(space),
                Err(e) => unevaluable = unevaluable.or(Some(e)),
            }
        }
        let mut point = vec![0u32; n];
        let mut work = BuildWork::default();
        space.len = space
            .build(0, &mut point, &mut work, &limits)
            .map_err(|e| match e {
                SpaceError::TooCostly {
                    kept, evaluations, ..
                } => SpaceError::TooCostly {
                    kept,
                    evaluations,
                    what: space.widest_restriction(),
                },
                e => e,
            })?;
        // A constant restriction that cannot be evaluated is an error only where the others
        // leave configurations (as any other restriction is).
        match unevaluable {
            Some(e) if space.len > 0 => Err(e),
            Some(_) => {
                // Empty, as when a constant restriction is false.
                space.len = 0;
                space.memo = vec![HashMap::new(); n];
                Ok(space)
            }
            None => Ok(space),
        }
    }

    /// The restriction over the most parameters, as text with their count (for
    /// [`SpaceError::TooCostly`]).
    fn widest_restriction(&self) -> String {
        self.restrictions
            .iter()
            .max_by_key(|r| r.params().len())
            .map(|r| format!("`{r}` relates {} parameters", r.params().len()))
            .unwrap_or_else(|| "no restriction".into())
    }

    pub(super) fn check(&self, ri: usize, point: &[u32], upto: usize) -> Result<bool, SpaceError> {
        let scope = Bound {
            space: self,
            point,
            upto,
        };
        self.restrictions[ri]
            .eval_bool(&scope)
            .map_err(|source| SpaceError::Eval {
                restriction: self.restrictions[ri].quoted(),
                config: self.partial_key(point, upto),
                source,
            })
    }

    pub(super) fn partial_key(&self, point: &[u32], upto: usize) -> String {
        let parts: Vec<String> = (0..upto)
            .map(|i| {
                let p = &self.params[i];
                format!("{}={}", p.name, p.values[point[i] as usize].python_str())
            })
            .collect();
        format!("{{{}}}", parts.join(", "))
    }

    pub(super) fn state(&self, k: usize, point: &[u32]) -> Box<[u32]> {
        self.live[k].iter().map(|&j| point[j]).collect()
    }

    /// Counts the valid completions of `point` from parameter `k` on, memoised per state of
    /// the parameters still used by later restrictions. `work` counts what is kept and the
    /// restriction evaluations; past `limits` ([`BUILD_LIMITS`]) the count stops with
    /// [`SpaceError::TooCostly`] (a restriction over every parameter leaves nothing to
    /// share: it took all memory before).
    pub(super) fn build(
        &mut self,
        k: usize,
        point: &mut Point,
        work: &mut BuildWork,
        limits: &BuildWork,
    ) -> Result<u128, SpaceError> {
        if k == self.params.len() {
            return Ok(1);
        }
        let key = self.state(k, point);
        if let Some(node) = self.memo[k].get(&key) {
            return Ok(node.ends.last().copied().unwrap_or(0));
        }
        work.kept += 1;
        let mut node = Node {
            values: Vec::new(),
            ends: Vec::new(),
        };
        let mut total: u128 = 0;
        'values: for v in 0..self.params[k].values.len() as u32 {
            point[k] = v;
            work.evaluations += self.checks[k].len() as u64;
            if work.kept > limits.kept || work.evaluations > limits.evaluations {
                return Err(SpaceError::TooCostly {
                    kept: work.kept,
                    evaluations: work.evaluations,
                    what: String::new(),
                });
            }
            // A restriction that cannot be evaluated here (a division by zero) is an error only
            // where every other restriction holds: where another rules the configuration out,
            // as a guard over a parameter bound later may (`b != 0` after `a % b == 0`), it is
            // simply not valid. Kernel Tuner checks in order; this does not depend on it.
            let mut unevaluable = None;
            for ri in 0..self.checks[k].len() {
                match self.check(self.checks[k][ri], point, k + 1) {
                    Ok(true) => {}
                    Ok(false) => continue 'values,
                    Err(e) => unevaluable = unevaluable.or(Some(e)),
                }
            }
            let sub = self.build(k + 1, point, work, limits)?;
            if let Some(e) = unevaluable {
                if sub > 0 {
                    return Err(e);
                }
                continue 'values;
            }
            if sub > 0 {
                work.kept += 1;
                total = total.checked_add(sub).ok_or(SpaceError::TooLarge)?;
                node.values.push(v);
                node.ends.push(total);
            }
        }
        self.memo[k].insert(key, node);
        Ok(total)
    }

    pub(super) fn node(&self, k: usize, point: &[u32]) -> Option<&Node> {
        self.memo[k].get(&self.state(k, point))
    }
}

/// The values of `values` equal (`==`) to one before them, in order: with a set, not a scan
/// of the values before each (quadratic: 400,000 values took more than a minute).
pub(crate) fn repeated_values(values: &[Value]) -> impl Iterator<Item = &Value> {
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    values.iter().filter(move |v| !seen.insert(ValueKey::of(v)))
}

/// A value as a hash key that is equal exactly when the values are (`==`): 0.0 and -0.0 are one
/// key; a NaN (never equal to anything) gets a key of its own.
#[derive(PartialEq, Eq, Hash)]
enum ValueKey<'a> {
    Bool(bool),
    Int(i64),
    Float(u64),
    Nan(usize),
    Str(&'a str),
}

impl<'a> ValueKey<'a> {
    fn of(v: &'a Value) -> ValueKey<'a> {
        match v {
            Value::Bool(b) => ValueKey::Bool(*b),
            Value::Int(i) => ValueKey::Int(*i),
            Value::Float(x) if x.is_nan() => ValueKey::Nan(x as *const f64 as usize),
            Value::Float(x) => ValueKey::Float(if *x == 0.0 { 0 } else { x.to_bits() }),
            Value::Str(s) => ValueKey::Str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A restriction over every parameter leaves nothing to share between partial
    /// configurations: past the limits the count stops with an error naming it (eight such
    /// parameters of 100 values took all memory before).
    #[test]
    fn counting_stops_past_its_limits_and_names_the_widest_restriction() {
        let params: Vec<Parameter> = (0..5)
            .map(|i| Parameter::new(&format!("p{i}"), (0..10).collect::<Vec<i64>>()))
            .collect();
        let sum = || vec![Expr::parse("p0 + p1 + p2 + p3 + p4 < 20").unwrap()];
        let full = TuningSpace::new(params.clone(), sum()).unwrap();
        let brute = (0..100_000).filter(|x| {
            let digits: i64 = (0..5).map(|d| (x / 10i64.pow(d)) % 10).sum();
            digits < 20
        });
        assert_eq!(full.len(), brute.count() as u128);
        let small = BuildWork {
            kept: 1000,
            evaluations: u64::MAX,
        };
        let e = TuningSpace::with_limits(params.clone(), sum(), &EmptyScope, small).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, SpaceError::TooCostly { .. }), "{text}");
        assert!(text.contains("relates 5 parameters"), "{text}");
        let few = BuildWork {
            kept: u64::MAX,
            evaluations: 100,
        };
        let e = TuningSpace::with_limits(params, sum(), &EmptyScope, few).unwrap_err();
        assert!(matches!(e, SpaceError::TooCostly { evaluations, .. } if evaluations > 100));
    }

    /// A restriction that cannot be evaluated (`a % b` at `b = 0`) is an error only where
    /// every other restriction holds: a guard over a parameter bound later, or listed later,
    /// rules such configurations out, whatever the order of the restrictions.
    #[test]
    fn a_restriction_that_cannot_be_evaluated_is_an_error_only_where_nothing_else_rules_it_out() {
        let params = || {
            vec![
                Parameter::new("a", (0..6).collect::<Vec<i64>>()),
                Parameter::new("b", vec![0i64, 1, 2, 3]),
                Parameter::new("c", vec![0i64, 1, 2]),
            ]
        };
        let exprs = |texts: &[&str]| -> Vec<Expr> {
            texts.iter().map(|t| Expr::parse(t).unwrap()).collect()
        };
        // Kernel Tuner's count, in order: b = 0 is ruled out by the guard before `a % b`.
        let expected = (0..6i64)
            .flat_map(|a| (1..4i64).flat_map(move |b| (1..3i64).map(move |c| (a, b, c))))
            .filter(|(a, b, _)| a % b == 0)
            .count() as u128;
        for order in [["b * c != 0", "a % b == 0"], ["a % b == 0", "b * c != 0"]] {
            let space = TuningSpace::new(params(), exprs(&order)).unwrap();
            assert_eq!(space.len(), expected, "{order:?}");
            // A configuration left out by the guard names it, not the division.
            let point = space
                .point(&crate::config::Config(
                    [("a", 2i64), ("b", 0), ("c", 1)]
                        .into_iter()
                        .map(|(n, v)| (n.to_string(), Value::Int(v)))
                        .collect(),
                ))
                .unwrap();
            let guard = Expr::parse("b * c != 0").unwrap().to_string();
            assert_eq!(space.violations(&point).unwrap(), vec![guard]);
        }
        // Without a guard, or with one that lets b = 0 through, it is an error naming the
        // restriction and a configuration where it fails.
        for texts in [&["a % b == 0"][..], &["a % b == 0", "c != 1"][..]] {
            let e = TuningSpace::new(params(), exprs(texts)).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, SpaceError::Eval { .. }), "{text}");
            assert!(text.contains("(a % b)") && text.contains("b=0"), "{text}");
        }
        // Two restrictions that cannot be evaluated where nothing else rules them out.
        let e = TuningSpace::new(params(), exprs(&["a % b == 0", "c % b == 0"])).unwrap_err();
        assert!(matches!(e, SpaceError::Eval { .. }), "{e}");
        // A constant restriction that cannot be evaluated is moot beside a false one.
        let space = TuningSpace::new(params(), exprs(&["1 % 0 == 0", "1 == 2"])).unwrap();
        assert!(space.is_empty());
        // ... and beside restrictions that leave no configuration.
        let space = TuningSpace::new(params(), exprs(&["a > 9", "1 % 0 == 0"])).unwrap();
        assert!(space.is_empty());
        assert!(TuningSpace::new(params(), exprs(&["1 % 0 == 0"])).is_err());
    }

    fn dup(values: Vec<Value>) -> Option<String> {
        match TuningSpace::new(vec![Parameter::new("p", values)], vec![]) {
            Err(SpaceError::DuplicateValue { value, .. }) => Some(value),
            _ => None,
        }
    }

    /// A value listed twice is found (equal as `==` says: 0.0 and -0.0 are, a NaN is equal
    /// to nothing, 1 and 1.0 are not), in time linear in the number of values.
    #[test]
    fn a_value_listed_twice_is_found_in_a_long_list() {
        let mut long: Vec<Value> = (0..300_000).map(Value::Int).collect();
        assert_eq!(dup(long.clone()), None);
        long.push(Value::Int(123_456));
        assert_eq!(dup(long).as_deref(), Some("123456"));
        assert!(dup(vec![Value::Float(0.0), Value::Float(-0.0)]).is_some());
        assert!(dup(vec![Value::Str("a".into()), Value::Str("a".into())]).is_some());
        assert!(dup(vec![Value::Bool(true), Value::Bool(true)]).is_some());
        assert_eq!(dup(vec![Value::Int(1), Value::Float(1.0)]), None);
        assert_eq!(
            dup(vec![Value::Float(f64::NAN), Value::Float(f64::NAN)]),
            None
        );
    }
}
