//! The on-disk compile cache shared by applications and `kw tune`: compiled binaries (CUDA
//! cubin or PTX, OpenCL program binaries) keyed by everything that changes them
//! ([`CacheKey`]). Both backends compile through [`CompileCache::compile_through`], so the
//! runtime and the tuner share it without knowing about it.
//!
//! Settings (read once per process, [`CompileCache::global`]):
//! - `KW_CACHE_DIR`: the directory; default `$XDG_CACHE_HOME/kernel-wisdom`, else
//!   `$HOME/.cache/kernel-wisdom`;
//! - `KW_CACHE=off` (or `0`, `false`, `no`): no cache (every compile runs the compiler);
//! - `KW_CACHE_MAX_BYTES`: size limit (bytes, or with a `K`, `M` or `G` suffix, binary
//!   units), default 1 GiB; beyond it the least recently used entries are removed.
//!
//! The directory is created 0700 and used only while it is private
//! ([`crate::files::check_private_dir`]: owned by the current user, writable by nobody else,
//! on a path nobody else may swap); otherwise the process compiles without the cache, after
//! one warning that names the directory and the fix. An entry's checksum and key are not
//! secret, so they protect against damage, not against someone who can write the directory:
//! keeping the directory private does. Entries are written atomically (temporary file +
//! rename, mode 0600) and verified when read ([`entry`], [`store`]): one that is not a regular
//! file owned by the user, or is truncated, corrupted, foreign or refused by the driver, is
//! counted, recompiled and replaced, never trusted. Nothing the cache does can fail a
//! compile: a cache that cannot be written is counted ([`CacheStats::store_errors`]) and
//! compiling goes on.

pub mod entry;
pub mod key;
pub mod store;

pub use entry::{Entry, EntryHeader};
pub use key::CacheKey;

use crate::backend::error::BackendError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// The environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "KW_CACHE_DIR";
/// The environment variable that turns the cache off (`off`).
pub const CACHE_ENV: &str = "KW_CACHE";
/// The environment variable setting the size limit.
pub const CACHE_MAX_ENV: &str = "KW_CACHE_MAX_BYTES";
/// The default size limit: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Where the cache is and how large it may grow, with any problem in the settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSettings {
    /// The directory, or `None` when the cache is off.
    pub dir: Option<PathBuf>,
    /// The size limit in bytes.
    pub max_bytes: u64,
    /// Why the cache is off, when it is.
    pub off_reason: Option<String>,
    /// Settings that were invalid and what was used instead.
    pub problems: Vec<String>,
}

/// Parses a size: `1073741824`, `512M`, `2G`, `64K` (binary units).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mul) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mul)
}

impl CacheSettings {
    /// The settings from environment variables read through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> CacheSettings {
        let mut problems = Vec::new();
        let max_bytes = match var(CACHE_MAX_ENV) {
            None => DEFAULT_MAX_BYTES,
            Some(v) => match parse_size(&v) {
                Some(0) => {
                    problems.push(format!(
                        "invalid {CACHE_MAX_ENV}={v:?}: a limit of 0 bytes would remove every \
                         entry as soon as it is written (to turn the cache off, set \
                         {CACHE_ENV}=off); using {DEFAULT_MAX_BYTES}"
                    ));
                    DEFAULT_MAX_BYTES
                }
                Some(n) => n,
                None => {
                    problems.push(format!(
                        "invalid {CACHE_MAX_ENV}={v:?} (expected bytes, or a number with K, M \
                         or G); using {DEFAULT_MAX_BYTES}"
                    ));
                    DEFAULT_MAX_BYTES
                }
            },
        };
        let off = |reason: String, problems| CacheSettings {
            dir: None,
            max_bytes,
            off_reason: Some(reason),
            problems,
        };
        match var(CACHE_ENV).map(|v| v.trim().to_ascii_lowercase()) {
            Some(v) if ["off", "0", "false", "no"].contains(&v.as_str()) => {
                return off(format!("{CACHE_ENV}={v}"), problems);
            }
            Some(v) if ["", "on", "1", "true", "yes"].contains(&v.as_str()) => {}
            Some(v) => problems.push(format!(
                "invalid {CACHE_ENV}={v:?} (expected on or off); the cache stays on"
            )),
            None => {}
        }
        let dir = crate::user_dirs::resolve(&var, CACHE_DIR_ENV, "XDG_CACHE_HOME", ".cache", "");
        match dir {
            Some(dir) => CacheSettings {
                dir: Some(dir),
                max_bytes,
                off_reason: None,
                problems,
            },
            None => off(
                format!("neither {CACHE_DIR_ENV}, XDG_CACHE_HOME nor HOME is set"),
                problems,
            ),
        }
    }

    /// The settings of this process's environment.
    pub fn from_env() -> CacheSettings {
        CacheSettings::from_vars(crate::diag::env_var)
    }
}

/// What a cache did (since it was opened in this process).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheStats {
    /// Compiler runs (every compile that was not served from the cache).
    pub compiles: u64,
    /// Time in those compiles (compiler and, for CUDA, the module load after it).
    pub compile_time: Duration,
    /// Compiles served from the cache.
    pub hits: u64,
    /// Time to read and load those entries.
    pub load_time: Duration,
    /// Lookups that found no entry.
    pub misses: u64,
    /// Entries found but not trusted (truncated, corrupted, foreign, other format).
    pub rejected: u64,
    /// Entries the driver refused to load.
    pub load_failures: u64,
    /// Entries written.
    pub stores: u64,
    /// Entries that could not be written.
    pub store_errors: u64,
    /// Entries removed to respect the size limit.
    pub evicted: u64,
}

#[derive(Default)]
struct Counters {
    compiles: AtomicU64,
    compile_ns: AtomicU64,
    hits: AtomicU64,
    load_ns: AtomicU64,
    misses: AtomicU64,
    rejected: AtomicU64,
    load_failures: AtomicU64,
    stores: AtomicU64,
    store_errors: AtomicU64,
    evicted: AtomicU64,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Where the cache says that it replaced an entry instead of the diagnostics (tests).
static WARN: OnceLock<fn(&str)> = OnceLock::new();

/// Sets the function told, in one line, about every entry the cache did not trust or the
/// driver refused (and that is being recompiled and replaced), instead of
/// [`crate::diag::warn_once`]. The first call wins.
pub fn set_warning_hook(hook: fn(&str)) {
    let _ = WARN.set(hook);
}

/// A compiled binary as a backend gives it to the cache.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// `cubin`, `ptx`, `opencl-binary`.
    pub kind: String,
    /// The name to look the kernel up by.
    pub symbol: String,
    /// The compiler options used (for listings).
    pub options: String,
    /// What else the backend needs to use the binary (stored in the entry's header).
    pub extra: String,
    /// The binary.
    pub payload: Vec<u8>,
}

/// What an entry is for, for listings: backend, kernel and device.
#[derive(Clone, Copy, Debug)]
pub struct Label<'a> {
    /// `cuda` or `opencl`.
    pub backend: &'a str,
    /// The kernel name.
    pub kernel: &'a str,
    /// The device (name and architecture).
    pub device: &'a str,
}

/// A compile cache: a directory (or none, when off) and counters.
#[derive(Default)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    max_bytes: u64,
    counters: Counters,
    /// The last entry not trusted and why (for diagnostics).
    last_rejection: Mutex<Option<String>>,
    /// Whether the directory is private: `None` inside when it is, else why not.
    trust: OnceLock<Option<String>>,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache")
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

impl CompileCache {
    /// A cache in `dir` limited to `max_bytes`.
    pub fn at(dir: impl Into<PathBuf>, max_bytes: u64) -> CompileCache {
        CompileCache {
            dir: Some(dir.into()),
            max_bytes,
            ..CompileCache::default()
        }
    }

    /// No cache: every compile runs the compiler (still counted).
    pub fn disabled() -> CompileCache {
        CompileCache {
            max_bytes: DEFAULT_MAX_BYTES,
            ..CompileCache::default()
        }
    }

    /// A cache as `settings` describe.
    pub fn with_settings(settings: &CacheSettings) -> CompileCache {
        match &settings.dir {
            Some(d) => CompileCache::at(d, settings.max_bytes),
            None => CompileCache {
                max_bytes: settings.max_bytes,
                ..CompileCache::disabled()
            },
        }
    }

    /// The process's cache, from the environment (read once; see the module docs). Invalid
    /// settings are warned about once, naming the variable, the value and what is used.
    pub fn global() -> Arc<CompileCache> {
        static GLOBAL: OnceLock<Arc<CompileCache>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let settings = CacheSettings::from_env();
                for p in &settings.problems {
                    crate::diag::warn_once(p);
                }
                Arc::new(CompileCache::with_settings(&settings))
            })
            .clone()
    }

    /// The directory when it exists (or could be created) and is private; otherwise `None`,
    /// after one warning naming the directory, the problem and the fix. Checked once.
    fn trusted_dir(&self) -> Option<&Path> {
        let dir = self.dir.as_deref()?;
        let verdict = self.trust.get_or_init(|| {
            crate::files::create_private_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))
                .and_then(|()| crate::files::check_private_dir(dir).map_err(|e| e.to_string()))
                .err()
        });
        match verdict {
            None => Some(dir),
            Some(why) => {
                crate::diag::warn_once(&format!(
                    "compile cache not used, compiling without it: {why}"
                ));
                None
            }
        }
    }

    /// Why the directory is not used, when it is not (checked once, see [`CompileCache`]).
    pub fn untrusted_reason(&self) -> Option<String> {
        self.trusted_dir();
        self.trust.get().cloned().flatten()
    }

    /// The directory, or `None` when off.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The size limit.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The counters so far.
    pub fn stats(&self) -> CacheStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CacheStats {
            compiles: get(&c.compiles),
            compile_time: Duration::from_nanos(get(&c.compile_ns)),
            hits: get(&c.hits),
            load_time: Duration::from_nanos(get(&c.load_ns)),
            misses: get(&c.misses),
            rejected: get(&c.rejected),
            load_failures: get(&c.load_failures),
            stores: get(&c.stores),
            store_errors: get(&c.store_errors),
            evicted: get(&c.evicted),
        }
    }

    /// The last entry that was found but not trusted, and why.
    pub fn last_rejection(&self) -> Option<String> {
        self.last_rejection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn reject(&self, counter: &AtomicU64, dir: &Path, key: &CacheKey, why: String) {
        add(counter, 1);
        store::remove(dir, key);
        let message = format!("compile cache entry not used, recompiling and replacing it: {why}");
        match WARN.get() {
            Some(hook) => hook(&message),
            None => crate::diag::warn_once(&message),
        }
        *self
            .last_rejection
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
    }

    /// Compiles through the cache. With a key and a directory: a trusted entry is handed to
    /// `load` (which makes the backend's kernel from it; its `Err` means the driver refused
    /// the binary); otherwise `compile` runs and the artifact it returns is stored under the
    /// key. Without a key (not cacheable) or without a directory, `compile` runs. `compile` is
    /// told whether an artifact will be stored (so that it fetches the binary only then).
    pub fn compile_through<T>(
        &self,
        key: Option<&CacheKey>,
        label: Label<'_>,
        load: impl FnOnce(&Entry) -> Result<T, String>,
        compile: impl FnOnce(bool) -> Result<(T, Option<Artifact>), BackendError>,
    ) -> Result<T, BackendError> {
        let c = &self.counters;
        let cached = match (key, self.trusted_dir()) {
            (Some(k), Some(d)) => Some((k, d)),
            _ => None,
        };
        if let Some((k, dir)) = cached {
            let started = Instant::now();
            match store::read(dir, k) {
                Ok(Some(e)) => match load(&e) {
                    Ok(t) => {
                        store::touch(dir, k);
                        add(&c.hits, 1);
                        add(&c.load_ns, nanos(started.elapsed()));
                        return Ok(t);
                    }
                    Err(why) => self.reject(
                        &c.load_failures,
                        dir,
                        k,
                        format!(
                            "{}: the driver refused it: {why}",
                            store::entry_path(dir, k).display()
                        ),
                    ),
                },
                Ok(None) | Err(store::ReadError::Io(_)) => add(&c.misses, 1),
                Err(store::ReadError::Untrusted(why)) => self.reject(&c.rejected, dir, k, why),
            }
        }
        let started = Instant::now();
        let (t, artifact) = compile(cached.is_some())?;
        add(&c.compiles, 1);
        add(&c.compile_ns, nanos(started.elapsed()));
        if let (Some((k, dir)), Some(a)) = (cached, artifact) {
            let created = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let e = Entry {
                header: EntryHeader {
                    key: k.hex(),
                    backend: label.backend.to_string(),
                    kernel: label.kernel.to_string(),
                    device: label.device.to_string(),
                    kind: a.kind,
                    symbol: a.symbol,
                    options: a.options,
                    created,
                    extra: a.extra,
                },
                payload: a.payload,
            };
            match store::write(dir, k, &e) {
                Ok(_) => {
                    add(&c.stores, 1);
                    if let Ok(n) = store::evict(dir, self.max_bytes) {
                        add(&c.evicted, n as u64);
                    }
                }
                Err(_) => add(&c.store_errors, 1),
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests;
