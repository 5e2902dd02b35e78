//! `kw capture show`'s tables: the tuning space (values, default, the configuration the
//! captured launch used) and the arguments.

use super::table;
use kw_core::capture_meta::CaptureMetadata;

/// Values as `a, b, c`, shortened past 8 (`1, 2, 3, ... 64 (12 values)`).
fn values(vals: &[kw_core::value::Value]) -> String {
    let shown: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
    if shown.len() <= 8 {
        shown.join(", ")
    } else {
        format!(
            "{}, ... {} ({} values)",
            shown[..3].join(", "),
            shown[shown.len() - 1],
            shown.len()
        )
    }
}

/// Prints the space and the arguments of a capture.
pub fn print(m: &CaptureMetadata) {
    let space = kw_replay::launch_space::space_of(m, &m.device);
    match &space {
        Ok(s) => println!(
            "space:        {} valid configurations of {} ({} parameters)",
            s.len(),
            s.product(),
            s.params().len()
        ),
        Err(e) => println!("space:        cannot be built: {e}"),
    }
    let params = &m.kernel.parameters;
    let rows: Vec<Vec<String>> = params
        .iter()
        .map(|p| {
            let launched = m.config.get(&p.name).map_or("-".into(), |v| v.to_string());
            vec![
                format!("  {}", p.name),
                values(&p.values),
                p.default.to_string(),
                launched,
            ]
        })
        .collect();
    table::print(&["  parameter", "values", "default", "launched"], &rows);
    println!("configuration launched: {}", m.config.key());
    println!("arguments:");
    let rows: Vec<Vec<String>> = m
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (kind, what) = match (a.len, &a.value) {
                (Some(n), _) => ("buffer", format!("{n} elements")),
                (None, Some(v)) => ("scalar", v.to_string()),
                (None, None) => ("scalar", "-".into()),
            };
            let role = match (&a.input, &a.output) {
                (Some(_), Some(_)) => "in, reference out",
                (Some(_), None) => "in",
                (None, Some(_)) => "reference out",
                (None, None) => "-",
            };
            vec![
                format!("  {i}"),
                a.name.clone(),
                a.ty.to_string(),
                kind.into(),
                what,
                role.into(),
            ]
        })
        .collect();
    table::print(
        &["  #", "name", "type", "kind", "value or length", "captured"],
        &rows,
    );
}
