//! `kw tune` confirms its winner before writing it (PoCL): the best candidates and the
//! default are measured again, alternating; the record is the winner only when the whole
//! confidence interval of its speed-up lies above 1, else the default, and the summary and
//! the record say which, with the spread. Which branch a run takes depends on the machine's
//! timing, so the test checks that whichever was taken is consistent.

mod common;

/// `kw tune --bundled vector_add:65536 --wisdom-dir wis ARGS` in `dir`: its standard output
/// (it must succeed).
fn tune(dir: &std::path::Path, args: &[&str]) -> String {
    let out = common::kw_in(dir)
        .args([
            "tune",
            "--bundled",
            "vector_add:65536",
            "--wisdom-dir",
            "wis",
        ])
        .args(args)
        .output()
        .expect("running kw");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_record_is_the_confirmed_winner_or_the_default() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = common::unique_dir("tune-confirm");
    let stdout = tune(
        &dir,
        &[
            "--budget",
            "10",
            "--samples",
            "3",
            "--log",
            "run.jsonl",
            "--confirm-rounds",
            "5",
            "--confirm-top",
            "2",
        ],
    );
    let wisdom: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("wis/vector_add.json")).unwrap())
            .unwrap();
    let rec = &wisdom["records"][0];
    let default = "block_size_x=256,elems_per_thread=1,strided=1,unroll=0";
    let config: Vec<String> = ["block_size_x", "elems_per_thread", "strided", "unroll"]
        .iter()
        .map(|k| format!("{k}={}", rec["config"][k]))
        .collect();
    let is_default = config.join(",") == default;
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("confirmation:"))
        .map(str::to_string);
    let best_is_default = stdout
        .lines()
        .find(|l| l.contains("best configuration:"))
        .is_some_and(|l| l.contains(default));
    if best_is_default {
        // Nothing to confirm: the search's best is the default itself.
        assert!(line.is_none(), "{stdout}");
        assert!(is_default);
        return;
    }
    let line = line.unwrap_or_else(|| panic!("no confirmation line:\n{stdout}"));
    let c = &rec["objective"]["confirmation"];
    assert_eq!(c["rounds"], 5, "{rec}");
    let (speedup, low, high) = (
        c["speedup"].as_f64().unwrap(),
        c["speedup_low"].as_f64().unwrap(),
        c["speedup_high"].as_f64().unwrap(),
    );
    assert!(low <= speedup && speedup <= high, "{c}");
    if is_default {
        assert!(
            line.contains("the default configuration is recorded"),
            "{line}"
        );
        assert_eq!((speedup, low, high), (1.0, 1.0, 1.0));
        assert_eq!(c["median_ms"], c["default_median_ms"]);
    } else {
        assert!(line.contains("faster than the default"), "{line}");
        assert!(low > 1.0, "a winner recorded without confidence: {c}");
        // 5 rounds: the interval is the whole range, at 1 - 2/32 coverage.
        assert!(
            (c["confidence"].as_f64().unwrap() - 0.9375).abs() < 1e-9,
            "{c}"
        );
        assert!(c["median_ms"].as_f64().unwrap() < c["default_median_ms"].as_f64().unwrap());
    }
    // The record's time is the confirmation's.
    assert_eq!(rec["objective"]["median_ms"], c["median_ms"]);
    // Ratios in words: "1.23x faster" or "1.18x slower", never "0.85x faster".
    for word in ["x faster", "x slower"] {
        let parts: Vec<&str> = line.split(word).collect();
        for before in &parts[..parts.len() - 1] {
            let n: f64 = before
                .rsplit([' ', '('])
                .next()
                .unwrap()
                .parse()
                .unwrap_or_else(|_| panic!("no number before `{word}`: {line}"));
            assert!(n >= 1.0, "{line}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under `--max-share` the confirmation is paced as the search is and counted in the share's
/// account (`confirm_s`, included in `busy_s`): the account stays within the share.
#[test]
fn the_confirmation_is_paced_by_the_share() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = common::unique_dir("tune-confirm-share");
    let share = 0.5;
    let stdout = tune(
        &dir,
        &[
            "--budget",
            "8",
            "--samples",
            "1",
            "--max-share",
            &share.to_string(),
            "--confirm-rounds",
            "4",
            "--confirm-top",
            "1",
        ],
    );
    let account = stdout
        .lines()
        .find(|l| l.contains("device share:"))
        .unwrap_or_else(|| panic!("no share account:\n{stdout}"));
    let field = |name: &str| -> f64 {
        let rest = account
            .split(name)
            .nth(1)
            .unwrap_or_else(|| panic!("no {name} in {account}"));
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let (busy, wall, confirm) = (field("busy_s="), field("wall_s="), field("confirm_s="));
    let confirmed = stdout
        .lines()
        .any(|l| l.trim_start().starts_with("confirmation:"));
    // Confirmed: 4 rounds of the default and the best, counted; not (the best is the
    // default): nothing to count.
    assert_eq!(confirm > 0.0, confirmed, "{stdout}");
    // Every evaluation, the confirmation's too, is followed by its pause.
    assert!(busy > 0.0 && busy <= share * wall + 1e-6, "{account}");
}
