//! The run's manifest, `SHARED/kw-slurm.json`: what `kw slurm` decided (the captures, the
//! number of array tasks, the `kw tune` options, the `kw` binary, the Slurm options), read
//! by every array task, the merge job and `--resubmit-missing`. A versioned format: a
//! manifest of an older version keeps loading, one of a newer version is refused naming the
//! file and both versions.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The manifest's file name in the shared directory.
pub const MANIFEST_FILE: &str = "kw-slurm.json";
/// The `format` field of a manifest.
pub const MANIFEST_FORMAT: &str = "kernel-wisdom slurm manifest";
/// The version this `kw` writes (and the newest it reads).
pub const MANIFEST_VERSION: u32 = 1;
/// The most of a manifest that is read (it lists capture paths; a million of them fit).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// The Slurm options of the run, as `kw slurm` was given them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlurmOptions {
    /// `--partition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `--account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// `--time` of each array task (Slurm's format: `MM`, `HH:MM:SS`, `D-HH:MM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// GPUs of each array task (`--gres=gpu:N`); 0: none asked for.
    #[serde(default)]
    pub gpus_per_task: u32,
    /// CPUs of each array task (`--cpus-per-task`), for the compile threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_per_task: Option<u32>,
    /// More `#SBATCH` lines of the array script, each without the `#SBATCH ` prefix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<String>,
    /// The job name of the array (the merge job's is this with `-merge`).
    pub job_name: String,
}

/// `SHARED/kw-slurm.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: String,
    /// [`MANIFEST_VERSION`] when written by this `kw`.
    pub version: u32,
    /// When `kw slurm` wrote it (RFC 3339, UTC).
    pub created: String,
    /// The `kw` version that wrote it.
    pub kw_version: String,
    /// The `kw` binary the array tasks and the merge job run (an absolute path the compute
    /// nodes must see).
    pub kw: PathBuf,
    /// The number of array tasks (shards): task `i` tunes the captures `j` with
    /// `j mod tasks == i`.
    pub tasks: usize,
    /// The captures, absolute and sorted: the order shards are cut from.
    pub captures: Vec<PathBuf>,
    /// `kw tune` options every task passes on (after its own `--wisdom-dir`, `--log`,
    /// `--state-dir` and `--resume`).
    pub tune_args: Vec<String>,
    /// The Slurm options.
    pub slurm: SlurmOptions,
}

/// Only the version fields, read first so that a newer manifest is refused as newer rather
/// than as malformed.
#[derive(Deserialize)]
struct Head {
    format: Option<String>,
    version: Option<u32>,
}

impl Manifest {
    /// The manifest of the shared directory `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    /// Reads and checks `dir`'s manifest; every error names the file.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = Manifest::path(dir);
        // It names the binary the jobs run and the options they pass: only the user's own,
        // which nobody else may write, is followed.
        let rules =
            kw_core::files::ReadRules::new("kw slurm manifest", MAX_MANIFEST_BYTES).private();
        let text = kw_core::files::read_to_string(&path, rules).map_err(|e| {
            if e.is_not_found() {
                anyhow::anyhow!(
                    "{}: no kw slurm manifest here (is {} the directory `kw slurm --out` \
                     was given?)",
                    path.display(),
                    dir.display()
                )
            } else {
                anyhow::Error::new(e)
            }
        })?;
        Manifest::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses a manifest's text (errors say what is wrong, not where: [`Manifest::load`]
    /// adds the file).
    pub fn parse(text: &str) -> Result<Manifest> {
        let head: Head = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("not a kw slurm manifest (invalid JSON: {e})"))?;
        if head.format.as_deref() != Some(MANIFEST_FORMAT) {
            bail!(
                "not a kw slurm manifest (its format is {}, expected \"{MANIFEST_FORMAT}\")",
                head.format
                    .map_or_else(|| "missing".to_string(), |f| format!("\"{f}\""))
            );
        }
        match head.version {
            None => bail!("a kw slurm manifest without a version"),
            Some(v) if v > MANIFEST_VERSION => bail!(
                "a kw slurm manifest of version {v}, written by a newer kw; this kw {} reads \
                 versions up to {MANIFEST_VERSION}: run the kw that wrote it",
                env!("CARGO_PKG_VERSION")
            ),
            Some(0) => bail!("a kw slurm manifest of version 0 (no such version)"),
            Some(_) => {}
        }
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("a damaged kw slurm manifest: {e}"))?;
        if m.tasks == 0 {
            bail!("a kw slurm manifest with 0 tasks");
        }
        if m.captures.len() < m.tasks {
            bail!(
                "a kw slurm manifest with more tasks ({}) than captures ({})",
                m.tasks,
                m.captures.len()
            );
        }
        Ok(m)
    }

    /// The manifest's JSON text (pretty, with a final newline).
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A short identity of this manifest (a hash of its text): completion markers carry it,
    /// so that a marker left by an earlier run in the same directory never counts.
    pub fn id(&self) -> String {
        kw_core::files::content_hash(self.to_text().as_bytes())[..16].to_string()
    }

    /// Writes the manifest into `dir` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = Manifest::path(dir);
        kw_core::files::write_atomic(
            &path,
            self.to_text().as_bytes(),
            kw_core::files::FileModes::get(),
        )
        .with_context(|| format!("{}: cannot write the manifest", path.display()))
    }
}

#[cfg(test)]
pub(crate) fn sample(tasks: usize, captures: &[&str]) -> Manifest {
    Manifest {
        format: MANIFEST_FORMAT.into(),
        version: MANIFEST_VERSION,
        created: "2026-11-25T18:00:00Z".into(),
        kw_version: "0.0.0".into(),
        kw: PathBuf::from("/opt/kw/bin/kw"),
        tasks,
        captures: captures.iter().map(PathBuf::from).collect(),
        tune_args: vec!["--strategy".into(), "exhaustive".into()],
        slurm: SlurmOptions {
            job_name: "kw-tune".into(),
            gpus_per_task: 1,
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_round_trips_and_its_id_follows_its_content() {
        let m = sample(2, &["/c/a.kwcap", "/c/b.kwcap", "/c/c.kwcap"]);
        let back = Manifest::parse(&m.to_text()).unwrap();
        assert_eq!(back, m);
        let mut other = m.clone();
        other.tasks = 3;
        assert_ne!(m.id(), other.id());
        assert_eq!(m.id(), back.id());
    }

    #[test]
    fn versions_older_newer_and_broken_are_told_apart() {
        let m = sample(1, &["/c/a.kwcap"]);
        let mut v: serde_json::Value = serde_json::from_str(&m.to_text()).unwrap();
        // An older manifest: version 1 with optional fields left out still loads.
        let mut old = v.clone();
        old["slurm"]
            .as_object_mut()
            .unwrap()
            .remove("gpus_per_task");
        let loaded = Manifest::parse(&old.to_string()).unwrap();
        assert_eq!(loaded.slurm.gpus_per_task, 0);
        // A newer one is refused as newer, naming both versions.
        v["version"] = serde_json::json!(MANIFEST_VERSION + 1);
        let e = Manifest::parse(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("newer kw") && e.contains("version 2"), "{e}");
        // No version, another format, and broken JSON.
        v.as_object_mut().unwrap().remove("version");
        let e = Manifest::parse(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("without a version"), "{e}");
        let e = Manifest::parse(r#"{"format":"kernel-wisdom wisdom","version":1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a kw slurm manifest"), "{e}");
        let e = Manifest::parse("{ nope").unwrap_err().to_string();
        assert!(e.contains("invalid JSON"), "{e}");
    }

    #[test]
    fn load_names_the_file_in_every_error() {
        let dir = std::env::temp_dir().join(format!(
            "kw-slurm-manifest-{}-{}",
            std::process::id(),
            kw_core::files::nonce(1)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let e = format!("{:#}", Manifest::load(&dir).unwrap_err());
        assert!(
            e.contains("kw-slurm.json") && e.contains("no kw slurm manifest"),
            "{e}"
        );
        std::fs::write(dir.join(MANIFEST_FILE), "[1, 2").unwrap();
        let e = format!("{:#}", Manifest::load(&dir).unwrap_err());
        assert!(
            e.contains("kw-slurm.json") && e.contains("invalid JSON"),
            "{e}"
        );
        let mut m = sample(1, &["/c/a.kwcap"]);
        m.version = 7;
        std::fs::write(dir.join(MANIFEST_FILE), m.to_text()).unwrap();
        let e = format!("{:#}", Manifest::load(&dir).unwrap_err());
        assert!(
            e.contains("kw-slurm.json") && e.contains("version 7"),
            "{e}"
        );
        m.version = MANIFEST_VERSION;
        m.save(&dir).unwrap();
        assert_eq!(Manifest::load(&dir).unwrap(), m);
        // One that others may write is not followed.
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(MANIFEST_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = format!("{:#}", Manifest::load(&dir).unwrap_err());
        assert!(
            e.contains("kw-slurm.json") && e.contains("writable by others"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
