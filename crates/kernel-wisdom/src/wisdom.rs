//! Wisdom at launch: the records of a kernel's wisdom file, and the choice of a configuration
//! per problem size (the five steps of [`kw_core::wisdom::select`]).
//!
//! Search path: the directories in `KW_WISDOM_PATH` (separated like `PATH`), then the
//! per-user wisdom directory `kw tune` writes to by default (`KW_USER_WISDOM_DIR`, else
//! `$XDG_DATA_HOME/kernel-wisdom/wisdom`, else `~/.local/share/kernel-wisdom/wisdom`), then the
//! application's wisdom directory ([`crate::WisdomKernel::with_wisdom_dir`]; `./wisdom` by
//! default). Every file found for the tuning key takes part: the selection uses the file whose
//! best match is at the earliest step (1-4), the earlier file on the path when two tie, and
//! falls back to the default configuration only when no file has a usable record. A file that
//! cannot be read or is not valid, and an invalid record, is reported once and skipped. `KW_DEVICE_NAME` makes the selection use another device name
//! (the wisdom of a similar GPU). `KW_LOG=debug` prints every selection and its reasons.

use kw_core::wisdom::{
    explain_numbered, find_wisdom_files, select_filling, Query, Selection, Step, WisdomRecord,
};
use kw_core::{config::Config, device::DeviceInfo, space::TuningSpace};
use std::path::{Path, PathBuf};

/// Directories searched before the application's own (`:`-separated on Unix).
pub const WISDOM_PATH_ENV: &str = "KW_WISDOM_PATH";
/// Overrides the device name used for selection.
pub const DEVICE_NAME_ENV: &str = "KW_DEVICE_NAME";

/// The launch of a configuration at a problem size, as the selection sees it: its blocks
/// (work-groups) and the device's compute units; `None` when unknown (the geometry needs the
/// launch's arguments, or the device does not say how many units it has).
pub type LaunchShape<'a> = dyn Fn(&Config, &[i64]) -> Option<(f64, f64)> + 'a;

/// The share of the compute units that get at least one block: `min(1, blocks / units)`
/// (the fill rule's measure, [`kw_core::wisdom::Fill`]).
fn fill_of((blocks, units): (f64, f64)) -> f64 {
    (blocks / units).min(1.0)
}

/// How evenly the blocks spread over the compute units, a block per unit at a time:
/// `blocks / (units x ceil(blocks / units))`, 1 when every wave of blocks is full. 157 blocks
/// on 132 units: a second wave of 25 blocks, 0.59.
fn balance_of((blocks, units): (f64, f64)) -> f64 {
    blocks / (units * (blocks / units).ceil().max(1.0))
}

/// An alternate configuration of the chosen record ([`WisdomRecord::alternates`]) is taken
/// instead of the record's own when its predicted speed at the query's size is at least this
/// many times the record's (the prediction is crude: the time measured at the record's size,
/// scaled by the change in the balance, blocks / (units x waves)).
pub const ALTERNATE_GAIN: f64 = 1.1;

/// The default application wisdom directory.
pub const DEFAULT_WISDOM_DIR: &str = "wisdom";

/// The configuration chosen for a problem size, and why.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The configuration.
    pub config: Config,
    /// The step that decided (step 5: the default configuration).
    pub step: Step,
    /// The record chosen, if any.
    pub record: Option<WisdomRecord>,
    /// The wisdom file it came from.
    pub file: Option<PathBuf>,
}

/// The records of one wisdom file on the search path.
#[derive(Debug)]
struct SourceFile {
    path: PathBuf,
    records: Vec<WisdomRecord>,
    /// `numbers[i]`: record i's 1-based position in the file
    /// ([`kw_core::wisdom::WisdomFile::record_numbers`]: rejected records keep their places),
    /// the number `kw wisdom show` gives it; what every message numbers records by.
    numbers: Vec<usize>,
    /// `usable[i]`: record i's configuration is valid in the current space.
    usable: Vec<Result<(), String>>,
}

/// The wisdom of one kernel on one device, loaded once.
#[derive(Debug)]
pub struct WisdomSource {
    files: Vec<SourceFile>,
    /// Every file's records, in search-path order.
    all_records: Vec<WisdomRecord>,
    query: Query,
    default_config: Config,
}

use kw_core::diag::debug_enabled;

/// The search path: `KW_WISDOM_PATH`'s directories, then the per-user wisdom directory
/// (where `kw tune` writes by default: [`kw_core::user_dirs::user_wisdom_dir`]), then
/// `app_dir` (or `./wisdom`), then the online wisdom directory (`KW_TUNE_DIR`, see
/// [`crate::online`]) when it exists. A `KW_WISDOM_PATH` entry, or an `app_dir`, that does
/// not exist or is not a directory is said once (info): a mistyped path would otherwise leave
/// every kernel on its default silently.
pub fn search_path(app_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os(WISDOM_PATH_ENV)
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    for d in &dirs {
        say_unusable(d, WISDOM_PATH_ENV);
    }
    dirs.extend(kw_core::user_dirs::user_wisdom_dir());
    // Naming the default (`wisdom`, as the quick start does) is the default: said as little.
    if let Some(d) = app_dir.filter(|d| *d != Path::new(DEFAULT_WISDOM_DIR)) {
        say_unusable(d, "the application's wisdom directory");
    }
    dirs.push(app_dir.map_or_else(|| PathBuf::from(DEFAULT_WISDOM_DIR), Path::to_path_buf));
    dirs.extend(crate::online::search_dir());
    dirs
}

/// Says once (info) that a wisdom directory named by `whom` does not exist or is not a
/// directory (a wisdom file named instead of its directory): no wisdom is read from it, and
/// a mistyped path would otherwise leave every kernel on its default silently.
fn say_unusable(d: &Path, whom: &str) {
    let why = match std::fs::metadata(d) {
        Err(_) => "which does not exist",
        Ok(m) if !m.is_dir() => {
            "which is not a directory (wisdom is read from the directories holding the files)"
        }
        Ok(_) => return,
    };
    if kw_core::diag::once(&format!("wisdom path entry {}", d.display())) {
        kw_core::diag::info(&format!(
            "{whom} names {}, {why}: no wisdom is read from it",
            d.display()
        ));
    }
}

impl WisdomSource {
    /// Loads the wisdom of `tuning_key` from `dirs` for `device`. Never fails: problems are
    /// reported once and leave the kernel on its default configuration.
    pub fn load(
        tuning_key: &str,
        dirs: &[PathBuf],
        device: &DeviceInfo,
        space: &TuningSpace,
        default_config: &Config,
    ) -> WisdomSource {
        Self::load_with(tuning_key, dirs, &[], device, space, default_config)
    }

    /// [`WisdomSource::load`], with wisdom files embedded in the program (`(label, JSON)`,
    /// e.g. the library's shipped records) after the files of the search path: a file on the
    /// path wins over an embedded one whose match comes at the same selection step.
    pub fn load_with(
        tuning_key: &str,
        dirs: &[PathBuf],
        embedded: &[(String, &str)],
        device: &DeviceInfo,
        space: &TuningSpace,
        default_config: &Config,
    ) -> WisdomSource {
        let (mut found, errors) = find_wisdom_files(tuning_key, dirs);
        for e in errors {
            kw_core::diag::warn_once(&format!("skipping wisdom: {e}"));
        }
        for (label, json) in embedded {
            let path = PathBuf::from(label);
            match kw_core::wisdom::WisdomFile::parse(&path, json.as_bytes()) {
                Ok(f) if f.tuning_key == tuning_key => found.push((path, f)),
                Ok(f) => kw_core::diag::warn_once(&format!(
                    "skipping embedded wisdom {label}: it is for `{}`, not `{tuning_key}`",
                    f.tuning_key
                )),
                Err(e) => kw_core::diag::warn_once(&format!("skipping embedded wisdom: {e}")),
            }
        }
        let files: Vec<SourceFile> = found
            .into_iter()
            .map(|(path, mut f)| {
                // Numbered by their place in the file, as `kw wisdom show` numbers them (and as
                // the rejected records are).
                let numbers = f.record_numbers();
                for (r, n) in f.records.iter_mut().zip(&numbers) {
                    // A parameter its recorded space declares but its configuration lacks (a
                    // damaged or hand-made record, an empty configuration) takes its default,
                    // as a parameter added since does, and is said once.
                    r.add_new_parameters_noting(space, &mut |p| {
                        kw_core::diag::warn_once(&format!(
                            "{}: record #{n} of `{tuning_key}` lacks `{}`, which its recorded \
                             tuning space declares: the runtime uses its default {}",
                            path.display(),
                            p.name,
                            p.default
                        ))
                    });
                    // Alternates the current space does not hold are dropped (as records are
                    // passed over).
                    r.alternates.retain(|a| match space.check_config(&a.config) {
                        Ok(_) => true,
                        Err(why) => {
                            kw_core::diag::debug(&format!(
                                "{}: an alternate of the record for problem size {:?} is not \
                                 used: {why}",
                                path.display(),
                                r.problem_size
                            ));
                            false
                        }
                    });
                }
                // A record of another backend never configures this device (the selection
                // stays within the backend), and its space may have parameters of its own
                // (`read_only`, `stream_store` are CUDA-only): it is left out without a word.
                let other = |r: &WisdomRecord| {
                    !r.device.backend.is_empty() && r.device.backend != device.backend.as_str()
                };
                let usable: Vec<Result<(), String>> = f
                    .records
                    .iter()
                    .map(|r| {
                        if other(r) {
                            Err(format!("a record of the {} backend", r.device.backend))
                        } else {
                            r.check_against(space).map(|_| ())
                        }
                    })
                    .collect();
                for (i, u) in usable.iter().enumerate() {
                    if other(&f.records[i]) {
                        continue;
                    }
                    if let Err(why) = u {
                        kw_core::diag::warn_once(&format!(
                            "{}: ignoring record #{} of `{tuning_key}` (the kernel's tuning space changed?): {why}",
                            path.display(),
                            numbers[i]
                        ));
                    }
                }
                SourceFile {
                    path,
                    records: f.records,
                    numbers,
                    usable,
                }
            })
            .collect();
        let device_name = kw_core::diag::env_var(DEVICE_NAME_ENV)
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| device.name.clone());
        WisdomSource {
            all_records: files.iter().flat_map(|f| f.records.clone()).collect(),
            files,
            query: Query {
                device_name,
                architecture: device.architecture.clone(),
                backend: device.backend.as_str().to_string(),
                problem_size: Vec::new(),
            },
            default_config: default_config.clone(),
        }
    }

    /// The first wisdom file found on the search path, if any.
    pub fn file(&self) -> Option<&Path> {
        self.files.first().map(|f| f.path.as_path())
    }

    /// Every wisdom file found on the search path, in order.
    pub fn files(&self) -> Vec<&Path> {
        self.files.iter().map(|f| f.path.as_path()).collect()
    }

    /// The records of every file found, in search-path order.
    pub fn records(&self) -> &[WisdomRecord] {
        &self.all_records
    }

    /// The configuration for a problem size (trailing 1s are ignored).
    pub fn choose(&self, problem_size: &[i64]) -> Choice {
        self.choose_where(problem_size, &|_| Ok(()))
    }

    /// The configuration for a problem size among the records whose configuration `valid`
    /// accepts (the runtime passes validity at the launch: size-dependent restrictions); a
    /// record it refuses is skipped with its reason (logged at debug level) and the selection
    /// falls through to the next candidate, then to the default configuration (which the
    /// caller checks in turn).
    pub fn choose_where(
        &self,
        problem_size: &[i64],
        valid: &dyn Fn(&Config) -> Result<(), String>,
    ) -> Choice {
        self.choose_filling(problem_size, valid, None)
    }

    /// [`WisdomSource::choose_where`] knowing each configuration's launch (`launch`: its
    /// blocks and the device's compute units at a problem size; `None`: unknown; the runtime
    /// passes its kernel's launch geometry): the fill rule of
    /// [`kw_core::wisdom::select_filling`], and at a size between records of this device, the
    /// record's alternates ([`WisdomRecord::alternates`]): one whose time at the record's size, scaled
    /// by how evenly its blocks spread over the compute units here against there
    /// (blocks / (units x waves)), predicts it [`ALTERNATE_GAIN`] times as fast as the record's own
    /// configuration is taken instead.
    pub fn choose_filling(
        &self,
        problem_size: &[i64],
        valid: &dyn Fn(&Config) -> Result<(), String>,
        launch: Option<&LaunchShape<'_>>,
    ) -> Choice {
        let record_fill =
            launch.map(|f| move |r: &WisdomRecord, size: &[i64]| f(&r.config, size).map(fill_of));
        let mut query = self.query.clone();
        query.problem_size = problem_size.to_vec();
        let mut selections: Vec<Selection> = Vec::with_capacity(self.files.len());
        for file in &self.files {
            let mut index = 0;
            let selection = select_filling(
                &file.records,
                &query,
                |r| {
                    let u = file.usable[index].clone();
                    index += 1;
                    u.and_then(|()| {
                        valid(&r.config).map_err(|why| format!("not valid at this launch: {why}"))
                    })
                },
                record_fill
                    .as_ref()
                    .map(|f| f as &kw_core::wisdom::Fill<'_>),
            );
            if debug_enabled() {
                kw_core::diag::debug(
                    format!(
                        "selection in {}:\n{}",
                        file.path.display(),
                        explain_numbered(&file.records, &file.numbers, &query, &selection)
                    )
                    .trim_end(),
                );
            }
            selections.push(selection);
        }
        // The file whose best match comes at the earliest step; the earlier file on ties.
        let best =
            kw_core::wisdom::earliest_step(&selections).map(|fi| (fi, selections.swap_remove(fi)));
        match best {
            Some((
                fi,
                Selection {
                    step,
                    record: Some(i),
                    ..
                },
            )) => {
                let file = &self.files[fi];
                let record = &file.records[i];
                kw_core::diag::debug(&format!(
                    "using record #{} of {} ({step})",
                    file.numbers[i],
                    file.path.display()
                ));
                // Only a record of this device: its alternates' times and blocks were measured
                // with this device's compute units.
                let config = match launch {
                    Some(shape) if step == Step::DeviceNearestSize => {
                        alternate(record, problem_size, valid, shape)
                    }
                    _ => None,
                };
                Choice {
                    config: config.unwrap_or_else(|| record.config.clone()),
                    step,
                    record: Some(record.clone()),
                    file: Some(file.path.clone()),
                }
            }
            _ => {
                kw_core::diag::debug(&format!(
                    "no usable record in {} file(s) on the search path: default configuration",
                    self.files.len()
                ));
                Choice {
                    config: self.default_config.clone(),
                    step: Step::Default,
                    record: None,
                    file: None,
                }
            }
        }
    }
}

/// The alternate of `record` to take at `size` instead of its own configuration, if any
/// ([`WisdomSource::choose_filling`]): of those whose balance here (blocks / (units x
/// waves)) is at least [`kw_core::wisdom::KEEP_FILL`], the one of highest predicted speed, relative to
/// the record's own, `(record ms / alternate ms) x (balance here / balance at the record's
/// size)`, when that is at least [`ALTERNATE_GAIN`] times the record's own prediction.
fn alternate(
    record: &WisdomRecord,
    size: &[i64],
    valid: &dyn Fn(&Config) -> Result<(), String>,
    shape: &LaunchShape<'_>,
) -> Option<Config> {
    if record.alternates.is_empty() {
        return None;
    }
    let predicted = |config: &Config, ms: f64| -> Option<(f64, f64)> {
        let here = balance_of(shape(config, size)?);
        let there = balance_of(shape(config, &record.problem_size)?);
        (there > 0.0).then(|| (record.objective.median_ms / ms * here / there, here))
    };
    let (own, _) = predicted(&record.config, record.objective.median_ms)?;
    // An alternate whose own balance here is below KEEP_FILL (on average over its waves a
    // quarter of the device idle) is not taken: where few blocks fill few units, time does not
    // follow the balance (measured: gemm_f16 at 384 x 384 x 1536 took 64 x 64 tiles, 36
    // blocks, 0.81 of the record's own speed).
    let (best, score) = record
        .alternates
        .iter()
        .filter(|a| valid(&a.config).is_ok())
        .filter_map(|a| Some((a, predicted(&a.config, a.median_ms)?)))
        .filter(|(_, (_, here))| *here >= kw_core::wisdom::KEEP_FILL)
        .map(|(a, (score, _))| (a, score))
        .max_by(|x, y| x.1.total_cmp(&y.1))?;
    if score < ALTERNATE_GAIN * own {
        return None;
    }
    kw_core::diag::debug(&format!(
        "taking the record's alternate {} (predicted {:.2} of the record's speed there, from its time at the record's size and the balance of its blocks here, against {:.2} for the record's own configuration)",
        best.config.key(),
        score,
        own
    ));
    Some(best.config.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::defs;
    use kw_core::backend::Device;
    use kw_core::device::BackendKind;
    use kw_core::value::Value;

    /// The shipped gemm records predate `KSPLIT`: they still load, are usable and mean
    /// `KSPLIT` = 1 (its default), and a record with a parameter the space lacks does not.
    #[test]
    fn a_record_without_a_new_parameter_takes_its_default() {
        let def = defs::gemm(BackendKind::Cuda).build().unwrap();
        let mut info = kw_core::null_device::NullDevice::new(BackendKind::Cuda)
            .info()
            .clone();
        info.name = "NVIDIA H100 80GB HBM3".into();
        info.max_shared_memory_per_block = 48 << 10;
        let space = def.space(Some(&info)).unwrap();
        // The shipped records as they were before split-K: without `KSPLIT`, in their
        // configuration and their recorded space.
        let mut file: serde_json::Value =
            serde_json::from_str(defs::shipped_wisdom("gemm").unwrap()).unwrap();
        for r in file["records"].as_array_mut().unwrap() {
            r["config"].as_object_mut().unwrap().remove("KSPLIT");
            if let Some(params) = r["space"]["parameters"].as_array_mut() {
                params.retain(|p| p["name"] != "KSPLIT");
            }
        }
        let old = serde_json::to_string_pretty(&file).unwrap();
        assert!(
            !old.contains("\"KSPLIT\": "),
            "the test needs records without it"
        );
        let extra = old.replace("\"SB\": ", "\"GONE\": 3, \"SB\": ");
        for (json, usable) in [(old, true), (extra, false)] {
            let source = WisdomSource::load_with(
                "kw_gemm",
                &[],
                &[("embedded:kw_gemm.json".to_string(), json.as_str())],
                &info,
                &space,
                &def.default_config(),
            );
            assert!(!source.records().is_empty());
            for r in source.records() {
                assert_eq!(r.config.get("KSPLIT"), Some(&Value::Int(1)));
            }
            let choice = source.choose(&[1024, 1024, 1024]);
            assert_eq!(choice.record.is_some(), usable, "{}", choice.config);
            if usable {
                assert_eq!(choice.step, Step::ExactDeviceExactSize);
                assert_ne!(&choice.config, &def.default_config());
            }
        }
    }

    /// Every shipped record of every library kernel is usable in that kernel's current space
    /// on a device of its backend (an H100-like CUDA device: the opt-in shared memory of
    /// 227 KiB; a null OpenCL device): a change of a space that leaves shipped records behind
    /// (as replacing gemm_f16's kernel would) fails here, not as a warning on users' screens.
    #[test]
    fn every_shipped_record_fits_its_kernels_space() {
        for name in defs::KERNELS {
            let mut cuda_records = 0;
            for backend in [BackendKind::Cuda, BackendKind::Opencl] {
                let Ok(def) = defs::definition(name, backend) else {
                    continue;
                };
                let mut info = kw_core::null_device::NullDevice::new(backend)
                    .info()
                    .clone();
                if backend == BackendKind::Cuda {
                    info.name = "NVIDIA H100 80GB HBM3".into();
                    info.max_shared_memory_per_block = 232448;
                }
                let space = def.space(Some(&info)).unwrap();
                let json = defs::shipped_wisdom(name).unwrap();
                let source = WisdomSource::load_with(
                    &def.tuning_key,
                    &[],
                    &[(format!("embedded:kw_{name}.json"), json)],
                    &info,
                    &space,
                    &def.default_config(),
                );
                assert_eq!(source.files.len(), 1, "{name}");
                let file = &source.files[0];
                for (i, usable) in file.usable.iter().enumerate() {
                    let record = &file.records[i];
                    // (A record without a backend applies to every backend.)
                    let of = &record.device.backend;
                    if !of.is_empty() && of != backend.as_str() {
                        continue;
                    }
                    assert!(
                        usable.is_ok(),
                        "{name} ({backend:?}): shipped record #{} ({}) unusable: {usable:?}",
                        file.numbers[i],
                        record.config
                    );
                    if backend == BackendKind::Cuda {
                        cuda_records += 1;
                    }
                }
                // Every shipped alternate fits the space too (loading drops one that does
                // not, without a word: a space change would lose them silently).
                let raw =
                    kw_core::wisdom::WisdomFile::parse(Path::new(name), json.as_bytes()).unwrap();
                let alternates = |records: &[WisdomRecord]| -> usize {
                    records
                        .iter()
                        .filter(|r| r.device.backend == backend.as_str())
                        .map(|r| r.alternates.len())
                        .sum()
                };
                assert_eq!(
                    alternates(&file.records),
                    alternates(&raw.records),
                    "{name} ({backend:?}): alternates dropped"
                );
            }
            assert!(cuda_records >= 4, "{name}: {cuda_records} CUDA records");
        }
    }
}
