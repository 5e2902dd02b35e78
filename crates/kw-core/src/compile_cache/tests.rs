use super::*;
use crate::files;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "kw-cache-test-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn key_of(i: usize) -> CacheKey {
    CacheKey::from_hex(&blake3::hash(&i.to_le_bytes()).to_hex()).expect("hex")
}

/// A payload that says which key it belongs to, of a size that varies with the key.
fn payload_of(i: usize) -> Vec<u8> {
    let mut p = format!("payload {i};").into_bytes();
    p.resize(100 + (i * 7919) % 60_000, (i % 251) as u8);
    p
}

const LABEL: Label<'static> = Label {
    backend: "test",
    kernel: "k",
    device: "none",
};

/// One compile of `i` through the cache: `Ok(true)` when it was served from the cache.
fn fill(cache: &CompileCache, i: usize) -> Result<bool, BackendError> {
    cache.compile_through(
        Some(&key_of(i)),
        LABEL,
        |e| {
            if e.payload == payload_of(i) && e.header.symbol == format!("k{i}") {
                Ok(true)
            } else {
                Err(format!("entry {i} holds another payload"))
            }
        },
        |_| {
            Ok((
                false,
                Some(Artifact {
                    kind: "test".into(),
                    symbol: format!("k{i}"),
                    options: String::new(),
                    extra: String::new(),
                    payload: payload_of(i),
                }),
            ))
        },
    )
}

#[test]
fn settings_from_the_environment() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        let m: HashMap<&str, &str> = pairs.iter().copied().collect();
        CacheSettings::from_vars(move |n| m.get(n).map(|v| v.to_string()))
    };
    let s = vars(&[("KW_CACHE_DIR", "/c"), ("HOME", "/h")]);
    assert_eq!(s.dir.as_deref(), Some(Path::new("/c")));
    assert_eq!(s.max_bytes, DEFAULT_MAX_BYTES);
    let s = vars(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
    assert_eq!(s.dir.as_deref(), Some(Path::new("/x/kernel-wisdom")));
    let s = vars(&[("HOME", "/h"), ("KW_CACHE_MAX_BYTES", "64M")]);
    assert_eq!(s.dir.as_deref(), Some(Path::new("/h/.cache/kernel-wisdom")));
    assert_eq!(s.max_bytes, 64 << 20);
    let s = vars(&[("HOME", "/h"), ("KW_CACHE", "OFF")]);
    assert_eq!(s.dir, None);
    assert!(s.off_reason.unwrap().contains("KW_CACHE"));
    let s = vars(&[
        ("HOME", "/h"),
        ("KW_CACHE", "maybe"),
        ("KW_CACHE_MAX_BYTES", "lots"),
    ]);
    assert!(s.dir.is_some());
    assert_eq!(s.problems.len(), 2, "{:?}", s.problems);
    assert_eq!(vars(&[]).dir, None);
    assert_eq!(parse_size("2G"), Some(2 << 30));
    assert_eq!(parse_size(" 123 "), Some(123));
    assert_eq!(parse_size("99999999999999G"), None);
}

#[test]
fn a_hit_compiles_nothing_and_off_compiles_every_time() {
    let dir = temp_dir("hit");
    let cache = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    assert!(!fill(&cache, 1).unwrap());
    assert!(fill(&cache, 1).unwrap());
    assert!(fill(&cache, 1).unwrap());
    let s = cache.stats();
    assert_eq!((s.compiles, s.hits, s.misses, s.stores), (1, 2, 1, 1));
    // Another cache object (another process) on the same directory finds it too.
    let other = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    assert!(fill(&other, 1).unwrap());
    assert_eq!(other.stats().compiles, 0);
    let off = CompileCache::disabled();
    for _ in 0..3 {
        assert!(!fill(&off, 1).unwrap());
    }
    assert_eq!((off.stats().compiles, off.stats().hits), (3, 0));
    let _ = std::fs::remove_dir_all(dir);
}

static WARNINGS: AtomicUsize = AtomicUsize::new(0);

fn count_warning(message: &str) {
    assert!(message.contains("recompiling and replacing"), "{message}");
    WARNINGS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn damaged_and_foreign_entries_are_recompiled_and_replaced() {
    set_warning_hook(count_warning);
    let dir = temp_dir("damage");
    let cache = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    fill(&cache, 7).unwrap();
    let path = store::entry_path(&dir, &key_of(7));
    let good = std::fs::read(&path).unwrap();
    let foreign = {
        fill(&cache, 8).unwrap();
        std::fs::read(store::entry_path(&dir, &key_of(8))).unwrap()
    };
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    let damages: [(&str, Vec<u8>); 4] = [
        ("truncated", good[..good.len() - 10].to_vec()),
        ("flipped", flipped),
        ("foreign", foreign),
        ("empty", Vec::new()),
    ];
    for (what, bytes) in damages {
        std::fs::write(&path, &bytes).unwrap();
        let before = cache.stats();
        assert!(!fill(&cache, 7).unwrap(), "{what}: recompiled");
        let after = cache.stats();
        assert_eq!(after.rejected, before.rejected + 1, "{what}: counted");
        assert_eq!(after.compiles, before.compiles + 1, "{what}");
        assert_eq!(
            std::fs::read(&path).unwrap().len(),
            good.len(),
            "{what}: replaced"
        );
        assert!(fill(&cache, 7).unwrap(), "{what}: the replacement is used");
        assert!(cache.last_rejection().is_some());
        assert!(WARNINGS.load(Ordering::SeqCst) >= 1, "{what}: said so");
    }
    // An entry whose checksum holds but which the driver refuses: replaced too.
    let refusing = cache
        .compile_through(
            Some(&key_of(7)),
            LABEL,
            |_| Err::<bool, _>("driver says no".into()),
            |_| Ok((false, None)),
        )
        .unwrap();
    assert!(!refusing);
    assert_eq!(cache.stats().load_failures, 1);
    assert!(!path.exists(), "a refused entry is removed");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unusable_directory_is_not_used_and_compiling_goes_on() {
    // The "directory" is a file: nothing can be read or written, every compile runs.
    let file = temp_dir("notadir");
    std::fs::write(&file, b"not a directory").unwrap();
    let cache = CompileCache::at(&file, DEFAULT_MAX_BYTES);
    assert!(!fill(&cache, 3).unwrap());
    assert!(!fill(&cache, 3).unwrap());
    let s = cache.stats();
    assert_eq!(
        (s.compiles, s.misses, s.rejected, s.stores, s.store_errors),
        (2, 0, 0, 0, 0),
        "{s:?}"
    );
    let why = cache.untrusted_reason().expect("not used");
    assert!(why.contains("notadir"), "{why}");
    let _ = std::fs::remove_file(file);
}

#[test]
fn eviction_removes_the_least_recently_used() {
    let dir = temp_dir("lru");
    // Room for three of the entries below.
    let cache = CompileCache::at(&dir, 160_000);
    let big = [6usize, 13, 21, 28]; // payloads of 41-48 KB: three fit
    for i in big {
        assert!(payload_of(i).len() > 40_000);
    }
    fill(&cache, 6).unwrap();
    fill(&cache, 13).unwrap();
    // Make 6 the most recently used (mtimes are compared; make sure they differ).
    let old = SystemTime::now() - Duration::from_secs(100);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(store::entry_path(&dir, &key_of(13)))
        .unwrap();
    f.set_modified(old).unwrap();
    assert!(fill(&cache, 6).unwrap());
    fill(&cache, 21).unwrap();
    fill(&cache, 28).unwrap();
    let (bytes, _) = store::usage(&dir).unwrap();
    assert!(bytes <= 160_000, "{bytes} bytes");
    assert_eq!(cache.stats().evicted, 1);
    assert!(
        store::entry_path(&dir, &key_of(6)).exists(),
        "recently used kept"
    );
    assert!(
        !store::entry_path(&dir, &key_of(13)).exists(),
        "LRU evicted"
    );
    assert!(store::entry_path(&dir, &key_of(28)).exists(), "newest kept");
    let (n, _) = store::clear(&dir).unwrap();
    assert!(n >= 1);
    assert_eq!(store::usage(&dir).unwrap().1, 0);
    let _ = std::fs::remove_dir_all(dir);
}

const CHILD_ENV: &str = "KW_CACHE_TEST_FILLER_DIR";
const KEYS: usize = 120;

/// Fills keys `0..KEYS` with two threads, in an order that depends on the process; exits
/// (panics) if any entry was not trusted or held another key's payload.
fn fill_all(dir: &Path, seed: usize) -> CacheStats {
    let cache = Arc::new(CompileCache::at(dir, DEFAULT_MAX_BYTES));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let cache = cache.clone();
            std::thread::spawn(move || {
                for j in 0..KEYS {
                    let i = (j * (2 * seed + t + 1) * 7 + t) % KEYS;
                    fill(&cache, i).expect("compile");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("filler thread");
    }
    cache.stats()
}

/// Run by `two_processes_filling_at_once_lose_nothing` in a child process (does nothing
/// otherwise).
#[test]
#[ignore = "run as a child process by two_processes_filling_at_once_lose_nothing"]
fn filler_child_process() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let s = fill_all(Path::new(&dir), 1);
    assert_eq!((s.rejected, s.load_failures), (0, 0), "{s:?}");
    println!("FILLER compiles={} hits={}", s.compiles, s.hits);
}

#[test]
fn two_processes_filling_at_once_lose_nothing() {
    let dir = temp_dir("concurrent");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "compile_cache::tests::filler_child_process",
                    "--ignored",
                    "--nocapture",
                ])
                .env(CHILD_ENV, &dir)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // This process fills too, at the same time.
    let mine = fill_all(&dir, 0);
    assert_eq!((mine.rejected, mine.load_failures), (0, 0), "{mine:?}");
    let mut compiles = mine.compiles;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed: {text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("FILLER"))
            .unwrap_or_else(|| panic!("the child ran no filler: {text}"));
        compiles += line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("compiles="))
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap();
    }
    // Every key was compiled at least once in all and is now in the cache, whole.
    assert!(compiles >= KEYS as u64);
    let after = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    for i in 0..KEYS {
        assert!(fill(&after, i).unwrap(), "entry {i} lost");
    }
    assert_eq!(after.stats().compiles, 0);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Writes a valid entry of key `i` holding `payload` straight into `dir` (as an attacker who
/// can write the directory would: checksum and key are not secret).
#[cfg(unix)]
fn forge(dir: &Path, i: usize, payload: &[u8]) -> PathBuf {
    let e = Entry {
        header: EntryHeader {
            key: key_of(i).hex(),
            backend: "test".into(),
            kernel: "k".into(),
            device: "none".into(),
            kind: "test".into(),
            symbol: format!("k{i}"),
            options: String::new(),
            created: 0,
            extra: String::new(),
        },
        payload: payload.to_vec(),
    };
    let path = store::entry_path(dir, &key_of(i));
    std::fs::write(&path, entry::encode(&e)).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn a_directory_others_may_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("shared");
    let cache = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    assert!(!fill(&cache, 3).unwrap());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "the cache directory is created private");
    assert_eq!(mode(&store::entry_path(&dir, &key_of(3))), 0o600);
    // Someone makes the directory world-writable and relabels a binary as entry 4.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    forge(&dir, 4, &payload_of(4));
    let victim = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    assert!(!fill(&victim, 4).unwrap(), "a planted entry was loaded");
    assert!(
        !fill(&victim, 3).unwrap(),
        "nothing is read from an untrusted directory"
    );
    let why = victim.untrusted_reason().expect("untrusted");
    assert!(
        why.contains("writable by others") && why.contains("chmod"),
        "{why}"
    );
    assert_eq!(victim.stats().hits, 0);
    assert_eq!(victim.stats().stores, 0, "nothing is written there either");
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn entries_that_are_links_devices_or_not_ours_are_rejected() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("links");
    let cache = CompileCache::at(&dir, DEFAULT_MAX_BYTES);
    assert!(!fill(&cache, 5).unwrap());
    // A link to /dev/zero is refused at once (never read without bound).
    let p6 = store::entry_path(&dir, &key_of(6));
    std::os::unix::fs::symlink("/dev/zero", &p6).unwrap();
    assert!(!fill(&cache, 6).unwrap());
    // A link to a good entry elsewhere is refused too: entries are never followed.
    let elsewhere = temp_dir("elsewhere");
    files::create_private_dir_all(&elsewhere).unwrap();
    let good = forge(&elsewhere, 7, &payload_of(7));
    std::os::unix::fs::symlink(&good, store::entry_path(&dir, &key_of(7))).unwrap();
    assert!(!fill(&cache, 7).unwrap());
    // A group-writable entry is refused.
    let p8 = forge(&dir, 8, &payload_of(8));
    std::fs::set_permissions(&p8, std::fs::Permissions::from_mode(0o664)).unwrap();
    assert!(!fill(&cache, 8).unwrap());
    assert!(cache.last_rejection().unwrap().contains("writable"));
    // An entry owned by another user (only root can make one).
    if files::current_uid() == Some(0) {
        let p9 = forge(&dir, 9, &payload_of(9));
        let made = std::process::Command::new("chown")
            .arg("4321:4321")
            .arg(&p9)
            .status()
            .unwrap();
        assert!(made.success(), "chown");
        assert!(!fill(&cache, 9).unwrap());
        assert!(cache
            .last_rejection()
            .unwrap()
            .contains("owned by user 4321"));
    }
    let s = cache.stats();
    assert_eq!(s.hits, 0, "{s:?}");
    // Every rejected entry was replaced by a good one: all hit now.
    for i in [5, 6, 7, 8] {
        assert!(fill(&cache, i).unwrap(), "entry {i}");
    }
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(elsewhere);
}

#[test]
fn a_zero_size_limit_is_refused() {
    let s = CacheSettings::from_vars(|n| match n {
        "HOME" => Some("/h".into()),
        "KW_CACHE_MAX_BYTES" => Some("0".into()),
        _ => None,
    });
    assert_eq!(s.max_bytes, DEFAULT_MAX_BYTES);
    assert!(s.problems[0].contains("KW_CACHE=off"), "{:?}", s.problems);
}
