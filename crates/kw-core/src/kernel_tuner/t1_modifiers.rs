//! KTT's launch `Modifiers` in a T1 file (`KernelSpecification.Modifiers`): each changes one
//! axis of the global or local size by a tuning parameter, in the order given, as KTT's
//! `AddParameter`/`AddThreadModifier` do:
//!
//! ```json
//! "GlobalSize": {"X": 512, "Y": 512, "Z": 1},
//! "Modifiers": [
//!   {"Type": "Global", "Dimension": "X", "Parameter": "OUTER_UNROLL_FACTOR", "Action": "Divide"},
//!   {"Type": "Local", "Dimension": "X", "Parameter": "WORK_GROUP_SIZE_X", "Action": "Multiply"}
//! ]
//! ```
//!
//! Actions: `Add`, `Subtract`, `Multiply`, `Divide` (integer division, rounding down, as
//! KTT's on its unsigned sizes) and `DivideCeil`. A file with `Modifiers` and no `LocalSize`
//! starts every local axis at 1 (KTT's default), not at `block_size_x`. Anything else a
//! modifier asks for (another type, a script) is an error naming the modifier.

use crate::expr::{param, BinaryOp, Expr, Func};
use crate::space::Parameter;
use serde_json::Value as Json;

/// One modifier: which size, which axis, and how a parameter changes it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Modifier {
    /// `Global` (true) or `Local`.
    pub global: bool,
    /// 0 = X, 1 = Y, 2 = Z.
    pub axis: usize,
    /// The tuning parameter.
    pub parameter: String,
    /// What it does.
    pub action: Action,
}

/// How a modifier's parameter changes the size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    Add,
    Subtract,
    Multiply,
    Divide,
    DivideCeil,
}

/// The keys a modifier has.
const KEYS: &[&str] = &["Type", "Dimension", "Parameter", "Action"];

/// The modifiers of `field` (`KernelSpecification.Modifiers`; none when absent or null), each
/// checked against the parameters `params`, and the keys of modifiers this reader does not
/// use (`#N.Key`, for the "not used by kw" note). An error says which modifier (from 1) and
/// why, to follow `KernelSpecification.Modifiers`: "#2: `Action` ..." or "must be a list".
pub(super) fn read(
    field: Option<&Json>,
    params: &[Parameter],
) -> Result<(Vec<Modifier>, Vec<String>), String> {
    let list = match field {
        None | Some(Json::Null) => return Ok((Vec::new(), Vec::new())),
        Some(Json::Array(a)) => a,
        Some(_) => return Err("must be a list".into()),
    };
    let mut unused = Vec::new();
    let mut mods = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        mods.push(one(m, params).map_err(|why| format!("#{}: {why}", i + 1))?);
        for k in m.as_object().into_iter().flat_map(|o| o.keys()) {
            if !KEYS.contains(&k.as_str()) {
                unused.push(format!("#{}.{k}", i + 1));
            }
        }
    }
    Ok((mods, unused))
}

fn one(m: &Json, params: &[Parameter]) -> Result<Modifier, String> {
    let obj = m.as_object().ok_or("not an object")?;
    let text = |key: &str| -> Result<&str, String> {
        obj.get(key)
            .and_then(Json::as_str)
            .ok_or_else(|| format!("`{key}` is missing or not a string"))
    };
    // A script computes the size in KTT; this reader cannot, and must not launch another
    // size than the file means, so a script is refused even beside a `Parameter`.
    if obj.contains_key("Script") {
        return Err(
            "a modifier's `Script` is not supported by this kw (give `Parameter` and \
                    `Action` only)"
                .into(),
        );
    }
    let global = match text("Type")? {
        t if t.eq_ignore_ascii_case("global") => true,
        t if t.eq_ignore_ascii_case("local") => false,
        other => {
            return Err(format!(
                "`Type` {other:?} is not supported (supported: Global, Local)"
            ))
        }
    };
    let axis = match text("Dimension")? {
        d if d.eq_ignore_ascii_case("x") => 0,
        d if d.eq_ignore_ascii_case("y") => 1,
        d if d.eq_ignore_ascii_case("z") => 2,
        other => return Err(format!("`Dimension` {other:?} is not X, Y or Z")),
    };
    let parameter = text("Parameter")?.to_string();
    if !params.iter().any(|p| p.name == parameter) {
        return Err(format!(
            "`Parameter` {parameter:?} is not one of the TuningParameters"
        ));
    }
    let action = match text("Action")?.to_ascii_lowercase().as_str() {
        "add" => Action::Add,
        "subtract" => Action::Subtract,
        "multiply" => Action::Multiply,
        "divide" => Action::Divide,
        "divideceil" => Action::DivideCeil,
        _ => {
            return Err(format!(
                "`Action` {:?} is not supported (supported: Add, Subtract, Multiply, Divide, \
                 DivideCeil)",
                text("Action")?
            ))
        }
    };
    Ok(Modifier {
        global,
        axis,
        parameter,
        action,
    })
}

/// `sizes` (global when `global`, else local) with the modifiers of that kind applied in
/// order.
pub(super) fn apply(mods: &[Modifier], global: bool, sizes: [Expr; 3]) -> [Expr; 3] {
    let mut out = sizes;
    for m in mods.iter().filter(|m| m.global == global) {
        let base = std::mem::replace(&mut out[m.axis], Expr::Lit(0i64.into()));
        let p = param(m.parameter.clone());
        let binary = |op| Expr::Binary {
            op,
            lhs: Box::new(base.clone()),
            rhs: Box::new(p.clone()),
        };
        out[m.axis] = match m.action {
            Action::Add => binary(BinaryOp::Add),
            Action::Subtract => binary(BinaryOp::Sub),
            Action::Multiply => binary(BinaryOp::Mul),
            Action::Divide => binary(BinaryOp::FloorDiv),
            Action::DivideCeil => Expr::Call {
                func: Func::DivCeil,
                args: vec![base, p],
            },
        };
    }
    out
}
