//! [`CompilePool`]: compiles configurations on CPU threads, ahead of the device. The
//! evaluator submits the configurations the tuning loop will evaluate next
//! ([`kw_tune::Evaluator::prefetch`]) and waits only for the one it measures now.

use kw_core::backend::{CompiledKernel, Device};
use kw_core::compile_cache::CacheStats;
use kw_core::{config::Config, kernel_def::KernelDef, space::Point, space::TuningSpace};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A compiled configuration, or why it failed (`compile failed: ...`).
pub type Compiled = Result<Arc<dyn CompiledKernel>, String>;

#[derive(Default)]
struct State {
    queue: VecDeque<(u128, Config)>,
    running: Vec<u128>,
    done: HashMap<u128, Compiled>,
    cpu: Duration,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

/// A pool of compile threads for one kernel on one device.
pub struct CompilePool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// The device's compile-cache counters before the pool compiled anything.
    cache_baseline: Option<CacheStats>,
}

/// Shortens a compile error for a results log: the reason and the first lines of the log.
fn summarise(e: &kw_core::backend::BackendError) -> String {
    let text = match e {
        kw_core::backend::BackendError::Compile { reason, log, .. } => {
            let head: Vec<&str> = log
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(3)
                .collect();
            if head.is_empty() {
                reason.clone()
            } else {
                format!("{reason}: {}", head.join(" | "))
            }
        }
        other => other.to_string(),
    };
    let mut text = text.replace('\n', " ");
    if text.len() > 400 {
        let mut cut = 400;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    format!("compile failed: {text}")
}

fn compile(device: &dyn Device, def: &KernelDef, config: &Config) -> Compiled {
    let spec = def
        .compile_spec(config, Some(device.info()))
        .map_err(|e| format!("invalid configuration: {e}"))?;
    device.compile(&spec.request()).map_err(|e| summarise(&e))
}

fn worker(shared: Arc<Shared>, device: Arc<dyn Device>, def: Arc<KernelDef>) {
    loop {
        let (key, config) = {
            let mut s = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if s.shutdown {
                    return;
                }
                if let Some(job) = s.queue.pop_front() {
                    s.running.push(job.0);
                    break job;
                }
                s = shared
                    .changed
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let started = Instant::now();
        let result = compile(device.as_ref(), &def, &config);
        let mut s = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.cpu += started.elapsed();
        s.running.retain(|k| *k != key);
        s.done.insert(key, result);
        drop(s);
        shared.changed.notify_all();
    }
}

impl CompilePool {
    /// A pool of `threads` (at least 1) compile threads.
    pub fn new(device: Arc<dyn Device>, def: Arc<KernelDef>, threads: usize) -> CompilePool {
        let cache_baseline = device.compile_cache().map(|c| c.stats());
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let threads = (0..threads.max(1))
            .map(|_| {
                let (s, d, k) = (shared.clone(), device.clone(), def.clone());
                std::thread::spawn(move || worker(s, d, k))
            })
            .collect();
        CompilePool {
            shared,
            threads,
            cache_baseline,
        }
    }

    /// The device's compile-cache counters when the pool was made (before it compiled
    /// anything).
    pub fn cache_baseline(&self) -> Option<CacheStats> {
        self.cache_baseline
    }

    /// The default thread count: the CPUs less one for the measuring thread (1 to 64: tuning
    /// real kernels is compile-bound, so every core compiles; the cap bounds the compilers'
    /// memory on very large nodes).
    pub fn default_threads() -> usize {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get().saturating_sub(1))
            .clamp(1, 64)
    }

    /// Needed now: `key` goes to the front of the line (submitted if it never was), unless
    /// it is compiling or compiled.
    fn to_front(s: &mut State, key: u128, config: &Config) {
        if let Some(pos) = s.queue.iter().position(|(k, _)| *k == key) {
            if let Some(job) = s.queue.remove(pos) {
                s.queue.push_front(job);
            }
        } else if !Self::known(s, key) {
            s.queue.push_front((key, config.clone()));
        }
    }

    fn known(s: &State, key: u128) -> bool {
        s.done.contains_key(&key)
            || s.running.contains(&key)
            || s.queue.iter().any(|(k, _)| *k == key)
    }

    /// Queues configurations to compile (in order; ones already known are skipped).
    pub fn submit(&self, jobs: impl IntoIterator<Item = (u128, Config)>) {
        let mut s = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (key, config) in jobs {
            if !Self::known(&s, key) {
                s.queue.push_back((key, config));
            }
        }
        drop(s);
        self.shared.changed.notify_all();
    }

    /// Queues the configurations of `points` in `space` (the kernel's tuning space on the
    /// pool's device; points outside it are skipped), keyed by their index in the space.
    pub fn prefetch(&self, space: &TuningSpace, points: &[Point]) {
        let jobs: Vec<(u128, Config)> = points
            .iter()
            .filter_map(|p| Some((space.index_of(p)?, space.config(p))))
            .collect();
        self.submit(jobs);
    }

    /// Takes the compiled configuration `key`, compiling it first in line if it was never
    /// submitted, and waiting for it. Returns it and how long the caller waited.
    pub fn take(&self, key: u128, config: &Config) -> (Compiled, Duration) {
        let started = Instant::now();
        let mut s = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Self::to_front(&mut s, key, config);
        self.shared.changed.notify_all();
        loop {
            if let Some(r) = s.done.remove(&key) {
                return (r, started.elapsed());
            }
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The position in `jobs` of the first configuration whose compile has finished; when
    /// none has, waits for one to finish if `wait`. The first of `jobs` is compiled next if
    /// it is not compiling yet (submitted now if it never was), so it is never passed over
    /// for long. `None` without waiting.
    pub fn first_done(&self, jobs: &[(u128, &Config)], wait: bool) -> Option<usize> {
        let keys: Vec<u128> = jobs.iter().map(|(k, _)| *k).collect();
        let mut s = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((key, config)) = jobs.first().filter(|(k, _)| !s.done.contains_key(k)) {
            Self::to_front(&mut s, *key, config);
            self.shared.changed.notify_all();
        }
        loop {
            if let Some(i) = keys.iter().position(|k| s.done.contains_key(k)) {
                return Some(i);
            }
            if !wait {
                return None;
            }
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The number of compile threads.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// CPU time spent compiling so far (all threads).
    pub fn cpu_time(&self) -> Duration {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cpu
    }
}

impl Drop for CompilePool {
    fn drop(&mut self) {
        {
            let mut s = self
                .shared
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            s.shutdown = true;
            s.queue.clear();
        }
        self.shared.changed.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
