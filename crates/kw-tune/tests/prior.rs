//! Priors (`kw_tune::prior`): Kernel Tuner cache files, results logs and wisdom files read,
//! matched into a space by parameter name (what does not fit noted), and a seeded run that
//! evaluates the prior's best first and still explores.

mod common;

use common::{shared_dir, simulation, small_objective, small_space};
use kw_core::config::Config;
use kw_core::kernel_tuner::{CacheFile, Outcome};
use kw_core::space::{Parameter, Point, TuningSpace};
use kw_core::wisdom::{
    Objective, Provenance, SpaceFingerprint, WisdomDevice, WisdomFile, WisdomRecord,
};
use kw_tune::prior::{self, PriorParams, PriorRank};
use kw_tune::{strategies, LogHeader, ResultsLog, Stop, Tuner};
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("kw-prior-{}-{nonce}-{name}", std::process::id()))
}

/// The best successful configuration of a cache file, by name.
fn best_of(cache: &CacheFile) -> Config {
    let e = cache
        .entries
        .iter()
        .filter_map(|e| match e.outcome {
            Outcome::Value(v) => Some((v, e)),
            _ => None,
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a success")
        .1;
    Config(
        cache
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(e.values.clone())
            .collect(),
    )
}

#[test]
fn a_kernel_tuner_cache_of_another_gpu_is_matched_by_name() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution"); // convolution_A100
    let file = dir.join("convolution_A4000.json.gz");
    let sources = prior::load(&file).expect("load the A4000 cache as a prior");
    assert_eq!(sources.len(), 1);
    assert!(sources[0].label.contains("A4000"), "{}", sources[0].label);
    let mapped = prior::map(&sources, &sim.space, PriorParams::default());
    assert_eq!(mapped.total, sources[0].results.len());
    assert!(mapped.matched > 3000, "{} matched", mapped.matched);
    assert!(mapped.notes.is_empty(), "{:?}", mapped.notes);
    // The prior's best comes first, as a point of this space.
    let best = best_of(&CacheFile::load(&file).expect("cache"));
    assert_eq!(sim.space.config(&mapped.points[0]), best);
    assert_eq!(mapped.points.len(), PriorParams::default().take);

    // A narrower space: configurations with values it does not declare are ignored, noted.
    let params: Vec<Parameter> = sim
        .space
        .params()
        .iter()
        .map(|p| {
            if p.name == "block_size_x" {
                Parameter::new("block_size_x", [16, 32])
            } else {
                p.clone()
            }
        })
        .collect();
    let narrow = TuningSpace::new(params, sim.space.restrictions().to_vec()).expect("space");
    let mapped = prior::map(&sources, &narrow, PriorParams::default());
    assert!(mapped.matched < mapped.total && mapped.matched > 0);
    let note = mapped.notes.join("\n");
    assert!(
        note.contains("values outside this space ignored") && note.contains("`block_size_x`"),
        "{note}"
    );
    assert!(mapped.points.iter().all(|p| narrow.contains(p)));
}

fn wisdom_record(space: &TuningSpace, bx: i64, by: i64, ms: f64, device: &str) -> WisdomRecord {
    let mut config = Config::default();
    config.set("bx", bx);
    config.set("by", by);
    config.set("unroll", 2);
    config.set("vector", 4); // not a parameter of the space below
    WisdomRecord {
        config,
        problem_size: vec![1024],
        device: WisdomDevice {
            name: device.into(),
            vendor: "V".into(),
            backend: "opencl".into(),
            architecture: "a".into(),
            driver: "1".into(),
        },
        objective: Objective {
            median_ms: ms,
            samples: 3,
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    }
}

#[test]
fn a_results_log_and_a_wisdom_file_are_matched_by_name() {
    let space = small_space();
    // A results log of a run on the small space.
    let log_path = temp("run.tune.jsonl");
    let log = ResultsLog::create(&log_path, &LogHeader::new(&space)).expect("log");
    let mut strategy = strategies::create("random", 5).expect("strategy");
    let sp = space.clone();
    let mut ev = move |p: &Point| small_objective(&sp, p);
    let report = Tuner::new(&space, Stop::Evaluations(30))
        .with_log(log)
        .run(&mut *strategy, &mut ev)
        .expect("run");
    let (best_point, _) = report.best.clone().expect("a success");

    let sources = prior::load(&log_path).expect("load the log as a prior");
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0].results.len(), 30);
    let mapped = prior::map(&sources, &space, PriorParams::default());
    assert_eq!((mapped.matched, mapped.total), (30, 30));
    assert_eq!(mapped.points[0], best_point, "the log's best first");

    // The same log in a space with another parameter and fewer `unroll` values.
    let mut params = space.params().to_vec();
    params[2] = Parameter::new("unroll", [0, 1, 2]);
    params.push(Parameter::new("tile", [1, 2]).with_default(2));
    let other = TuningSpace::new(params, space.restrictions().to_vec()).expect("space");
    let mapped = prior::map(&sources, &other, PriorParams::default());
    let note = mapped.notes.join("\n");
    assert!(note.contains("`tile` missing"), "{note}");
    assert!(note.contains("`unroll` = 4"), "{note}");
    assert!(mapped.matched < 30, "{} matched", mapped.matched);
    for p in &mapped.points {
        assert_eq!(other.config(p).get("tile"), Some(&2.into()));
    }

    // A wisdom file: one source per record; `vector` is not a parameter here.
    let mut wisdom = WisdomFile::new("small");
    wisdom.records = vec![
        wisdom_record(&space, 64, 2, 1.5, "Slow GPU"),
        wisdom_record(&space, 128, 4, 0.5, "Fast GPU"),
        wisdom_record(&space, 512, 4, 0.2, "Odd GPU"), // 512 is not a value of `bx`
    ];
    let wisdom_path = temp("small.json");
    wisdom.save(&wisdom_path).expect("save");
    let sources = prior::load(&wisdom_path).expect("load the wisdom as a prior");
    assert_eq!(sources.len(), 3);
    let mapped = prior::map(
        &sources,
        &space,
        PriorParams {
            rank: PriorRank::RoundRobin,
            ..PriorParams::default()
        },
    );
    assert_eq!(mapped.points.len(), 2);
    let configs: Vec<Config> = mapped.points.iter().map(|p| space.config(p)).collect();
    assert_eq!(configs[0].get("bx"), Some(&64.into()));
    assert_eq!(configs[1].get("bx"), Some(&128.into()));
    let note = mapped.notes.join("\n");
    assert!(note.contains("`vector` not in this space"), "{note}");
    assert!(
        note.contains("Odd GPU") && note.contains("`bx` = 512"),
        "{note}"
    );

    // Anything else is an error naming the file and the three formats.
    let junk = temp("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").expect("write");
    let err = prior::load(&junk).expect_err("not a prior").to_string();
    assert!(err.contains(&junk.display().to_string()), "{err}");
    assert!(
        err.contains("cache file") && err.contains("wisdom"),
        "{err}"
    );
    for p in [log_path, wisdom_path, junk] {
        std::fs::remove_file(p).ok();
    }
}

/// A FIFO given as a prior is refused at once (it blocked `kw tune` and `kw simulate` for
/// ever: each format's reader opened it, waiting for a writer).
#[test]
fn a_fifo_prior_is_refused_without_waiting() {
    let fifo = temp("fifo.json");
    let _ = std::fs::remove_file(&fifo);
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("SKIPPED: mkfifo is not available");
            return;
        }
    }
    let err = prior::load(&fifo).expect_err("a FIFO").to_string();
    assert!(
        err.contains("FIFO") && err.contains("not a regular file"),
        "{err}"
    );
    std::fs::remove_file(&fifo).ok();
}

/// With more records than the prior takes configurations, the records of the device being
/// tuned come first, nearest problem size first: a retune evaluates the record of its own
/// size before any other, whatever the order of the file.
#[test]
fn a_wisdom_prior_takes_the_nearest_records_of_the_device_first() {
    let space = small_space();
    let sized = |bx: i64, by: i64, size: i64, device: &str| {
        let mut r = wisdom_record(&space, bx, by, 1.0, device);
        r.problem_size = vec![size];
        r
    };
    let mut wisdom = WisdomFile::new("small");
    wisdom.records = vec![
        sized(16, 2, 65536, "GPU"),
        sized(32, 1, 4096, "Other GPU"),
        sized(64, 2, 64, "GPU"),
        sized(128, 2, 16384, "GPU"),
        sized(256, 2, 4096, "GPU"),
        sized(64, 4, 1024, "GPU"),
    ];
    let path = temp("nearest.json");
    wisdom.save(&path).expect("save");
    let mut sources = prior::load(&path).expect("load");
    prior::nearest_first(&mut sources, "GPU", &[4096]);
    let order: Vec<(String, Vec<i64>)> = sources
        .iter()
        .map(|s| (s.device.clone(), s.problem_size.clone()))
        .collect();
    let want: Vec<(String, Vec<i64>)> = [
        ("GPU", 4096),
        // 1024 and 16384 are as far from 4096 (a factor 4): the file's order.
        ("GPU", 16384),
        ("GPU", 1024),
        ("GPU", 65536),
        ("GPU", 64),
        ("Other GPU", 4096),
    ]
    .iter()
    .map(|(d, s)| (d.to_string(), vec![*s]))
    .collect();
    assert_eq!(order, want);
    let mapped = prior::map(
        &sources,
        &space,
        PriorParams {
            take: 2,
            ..PriorParams::default()
        },
    );
    let bx: Vec<Option<kw_core::value::Value>> = mapped
        .points
        .iter()
        .map(|p| space.config(p).get("bx").cloned())
        .collect();
    assert_eq!(bx, vec![Some(256.into()), Some(128.into())]);
    std::fs::remove_file(path).ok();
}

/// A run seeded with a prior evaluates the prior's configurations first, in order, and then
/// keeps exploring: most of its later evaluations are far from every prior configuration.
#[test]
fn a_seeded_run_evaluates_the_prior_first_and_still_explores() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution");
    let sources = prior::load(&dir.join("convolution_A6000.json.gz")).expect("prior");
    let mapped = prior::map(&sources, &sim.space, PriorParams::default());
    let seeding = mapped.seeding();
    let k = seeding.points.len();
    assert!(k >= 3);
    let mut strategy =
        strategies::create_seeded(strategies::DEFAULT, 7, &seeding).expect("strategy");
    assert!(strategy.name().ends_with("+prior"));
    let mut ev = sim.evaluator.clone();
    let report = Tuner::new(&sim.space, Stop::Evaluations(60))
        .run(&mut *strategy, &mut ev)
        .expect("run");
    let visited: Vec<Point> = report.history.iter().map(|e| e.point.clone()).collect();
    assert_eq!(&visited[..k], &seeding.points[..], "the prior's best first");
    let distance = |a: &Point, b: &Point| a.iter().zip(b).filter(|(x, y)| x != y).count();
    let far = visited[k..]
        .iter()
        .filter(|p| seeding.points.iter().all(|q| distance(p, q) >= 3))
        .count();
    assert!(
        far >= 10,
        "only {far} of {} later evaluations differ from every prior configuration in 3+ parameters",
        visited.len() - k
    );
    // Without a prior, the same strategy and seed starts elsewhere.
    let mut plain =
        strategies::create_seeded(strategies::DEFAULT, 7, &Default::default()).expect("strategy");
    let mut ev = sim.evaluator.clone();
    let alone = Tuner::new(&sim.space, Stop::Evaluations(5))
        .run(&mut *plain, &mut ev)
        .expect("run");
    assert_ne!(alone.history[0].point, seeding.points[0]);
}

/// Matching a prior's configurations: numbers by value (a cache numpy wrote, `64.0` for
/// `64`), and a configuration naming none of the space's parameters is no match (it would be
/// the space's default in full).
#[test]
fn prior_values_match_by_number_and_foreign_configurations_do_not_match() {
    let space = small_space();
    let config = |pairs: &[(&str, kw_core::value::Value)]| {
        let mut c = Config::default();
        for (n, v) in pairs {
            c.set(n, v.clone());
        }
        c
    };
    use kw_core::value::Value;
    let source = prior::PriorSource {
        label: "numpy.json".into(),
        kernel: String::new(),
        device: String::new(),
        problem_size: Vec::new(),
        results: vec![
            (
                config(&[
                    ("bx", Value::Float(64.0)),
                    ("by", Value::Float(2.0)),
                    ("unroll", Value::Int(2)),
                ]),
                Some(1.0),
            ),
            (
                config(&[("a", Value::Int(1)), ("b", Value::Int(2))]),
                Some(0.5),
            ),
        ],
    };
    let mapped = prior::map(&[source], &space, PriorParams::default());
    assert_eq!((mapped.matched, mapped.total), (1, 2));
    assert_eq!(mapped.points.len(), 1);
    assert_eq!(space.config(&mapped.points[0]).get("bx"), Some(&64.into()));
    let notes = mapped.notes.join("\n");
    assert!(
        notes.contains("1 configuration(s) naming no parameter"),
        "{notes}"
    );
}

/// A flag written 1/0 in the prior's file and True/False in this space (or the other way) is
/// the same value, as Python compares (`True == 1`): every configuration of such a prior was
/// ignored. The note of values outside the space names each parameter that rules some out.
#[test]
fn a_flag_written_as_0_and_1_matches_true_and_false() {
    let path = temp("flags.json");
    std::fs::write(
        &path,
        r#"{"device_name": "D", "kernel_name": "k", "problem_size": [64], "tune_params_keys": ["bx", "flag", "v"],
"tune_params": {"bx": [16, 32], "flag": [1, 0], "v": [1, 8]}, "objective": "time", "cache": {
"16,1,1": {"bx": 16, "flag": 1, "v": 1, "time": 2.0},
"32,0,1": {"bx": 32, "flag": 0, "v": 1, "time": 1.0},
"32,1,8": {"bx": 32, "flag": 1, "v": 8, "time": 0.5},
"16,0,8": {"bx": 16, "flag": 0, "v": 8, "time": 3.0}}}"#,
    )
    .unwrap();
    let sources = prior::load(&path).expect("the cache as a prior");
    let space = TuningSpace::new(
        vec![
            Parameter::new("bx", [16, 32]),
            Parameter::new("flag", [true, false]),
            Parameter::new("v", [1]),
        ],
        vec![],
    )
    .unwrap();
    let mapped = prior::map(&sources, &space, PriorParams::default());
    assert_eq!(mapped.matched, 2, "{:?}", mapped.notes);
    let best = space.config(&mapped.points[0]);
    assert_eq!(best.get("flag"), Some(&kw_core::value::Value::Bool(false)));
    let note = mapped.notes.join("\n");
    assert!(
        note.contains("2 configuration(s) with values outside"),
        "{note}"
    );
    assert!(note.contains("`v` = 8"), "{note}");
    let _ = std::fs::remove_file(&path);
}

/// A prior that records another kernel's name (a cache file, a results log) is used where
/// parameter names match, and said with both names; a source or a run that does not know its
/// kernel's name (a wisdom record) is not. A cache's `schema_version` from a newer Kernel Tuner
/// is read (with a warning).
#[test]
fn a_prior_of_another_kernel_is_noted_by_name() {
    let path = temp("other-kernel.json");
    std::fs::write(
        &path,
        r#"{"schema_version": "2.1.0", "device_name": "D", "kernel_name": "matmul_kernel", "problem_size": [64], "tune_params_keys": ["bx"],
"tune_params": {"bx": [16, 32]}, "objective": "time", "cache": {
"16": {"bx": 16, "time": 2.0}, "32": {"bx": 32, "time": 1.0}}}"#,
    )
    .unwrap();
    let sources = prior::load(&path).expect("a newer schema is read");
    assert_eq!(sources[0].kernel, "matmul_kernel");
    let notes = prior::kernel_notes(&sources, "convolution_kernel");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("results of kernel `matmul_kernel`, not `convolution_kernel`"),
        "{notes:?}"
    );
    assert!(notes[0].contains("other-kernel.json"), "{notes:?}");
    assert!(prior::kernel_notes(&sources, "matmul_kernel").is_empty());
    assert!(prior::kernel_notes(&sources, "").is_empty());
    let mut unnamed = sources.clone();
    unnamed[0].kernel.clear();
    assert!(prior::kernel_notes(&unnamed, "convolution_kernel").is_empty());
    let _ = std::fs::remove_file(&path);
}
