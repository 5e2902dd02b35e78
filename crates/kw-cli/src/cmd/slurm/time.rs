//! Time limits: a Slurm time in seconds, and the warning `kw slurm` gives when a task's
//! captures may take longer than the tasks' `--time`.

/// Seconds of a Slurm time limit (`M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`); `None`
/// for `UNLIMITED` or what does not parse.
pub fn slurm_seconds(t: &str) -> Option<u64> {
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (d.parse::<u64>().ok()?, Some(r)),
        None => (0, None),
    };
    let parts: Vec<u64> = rest
        .unwrap_or(t)
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let secs = match (rest.is_some(), parts.as_slice()) {
        (false, [m]) => m * 60,
        (false, [m, s]) => m * 60 + s,
        (_, [h, m, s]) => h * 3600 + m * 60 + s,
        (true, [h]) => h * 3600,
        (true, [h, m]) => h * 3600 + m * 60,
        _ => return None,
    };
    Some(days * 86400 + secs)
}

/// A warning when a task's captures may take longer than its Slurm time limit: each capture
/// may take `kw tune --time` (15 minutes when no stop condition is given at all).
pub fn time_warning(
    tune_args: &[String],
    per_shard: usize,
    slurm_time: Option<&str>,
) -> Option<String> {
    let limit = slurm_seconds(slurm_time?)?;
    if limit == 0 {
        return None; // Slurm's --time=0: no limit
    }
    let value = |name: &str| {
        tune_args.iter().enumerate().find_map(|(i, w)| {
            w.strip_prefix(&format!("{name}="))
                .map(str::to_string)
                .or_else(|| (w == name).then(|| tune_args.get(i + 1).cloned()).flatten())
        })
    };
    let per_capture = match value("--time") {
        Some(t) => crate::cmd::tune::parse_duration(&t).ok()?.as_secs(),
        None if value("--budget").is_none() && value("--stop").is_none() => 15 * 60,
        None => return None,
    };
    let need = per_capture * per_shard as u64;
    (need > limit).then(|| {
        format!(
            "a task tunes up to {per_shard} capture(s) for up to {} min each (kw tune's \
             --time{}), {} min in all, more than the tasks' --time of {} min: Slurm may end \
             tasks at their limit (the merge then names them; --resubmit-missing resumes them)",
            per_capture / 60,
            if value("--time").is_some() {
                ""
            } else {
                " default"
            },
            need / 60,
            limit / 60
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_times_and_the_time_warning() {
        assert_eq!(slurm_seconds("90"), Some(5400));
        assert_eq!(slurm_seconds("2:30"), Some(150));
        assert_eq!(slurm_seconds("1:00:00"), Some(3600));
        assert_eq!(slurm_seconds("1-12"), Some(86400 + 12 * 3600));
        assert_eq!(slurm_seconds("1-0:30"), Some(86400 + 1800));
        assert_eq!(slurm_seconds("2-1:00:05"), Some(2 * 86400 + 3605));
        assert_eq!(slurm_seconds("UNLIMITED"), None);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // 3 captures x 20 min > 30 min.
        let w = time_warning(&args(&["--time", "20m"]), 3, Some("30")).unwrap();
        assert!(
            w.contains("3 capture(s) for up to 20 min") && w.contains("60 min in all"),
            "{w}"
        );
        assert!(time_warning(&args(&["--time=20m"]), 3, Some("2:00:00")).is_none());
        // No stop condition: kw tune's 15 minutes per capture.
        assert!(time_warning(&[], 2, Some("20"))
            .unwrap()
            .contains("--time default"));
        // A budget alone: the time is not known, nothing is said.
        assert!(time_warning(&args(&["--budget", "50"]), 9, Some("1")).is_none());
        assert!(time_warning(&[], 9, None).is_none());
        // Slurm's 0: no limit, nothing to warn of; the message has no runs of spaces.
        assert!(time_warning(&[], 9, Some("0")).is_none());
        assert!(!w.contains("  "), "{w}");
    }
}
