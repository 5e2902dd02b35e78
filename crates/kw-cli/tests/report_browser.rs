//! `kw report` end to end: a real tuning run on PoCL (exhaustive, so that its log exports to
//! a complete Kernel Tuner cache), its wisdom, its capture and `kw simulate --json` scores of
//! that cache (ours and a "peer"'s) make one report, which a headless Chromium opens: the
//! page must load with no console error, every figure must have a drawing, and nothing
//! outside the file may be referenced.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

fn kw(dir: &Path, args: &[&str]) -> Output {
    let out = common::kw_in(dir).args(args).output().expect("running kw");
    assert!(
        out.status.success(),
        "kw {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The headless browser: `KW_CHROMIUM`, else `chromium` or `chromium-browser` on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KW_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Runs before anything else on the page: collects errors and console errors.
const PROBE_HEAD: &str = "<script>window.__kwErrors=[];\
window.addEventListener('error',function(e){window.__kwErrors.push(e.message||\
('failed to load '+((e.target&&(e.target.src||e.target.href))||'a resource')))},true);\
(function(){var ce=console.error;console.error=function(){window.__kwErrors.push(\
Array.prototype.join.call(arguments,' '));ce.apply(console,arguments)}})();</script>";

/// Runs after the page: for each figure, counts the visible shapes drawn in a colour that
/// is not grey (data, not axes or background), and writes the verdict into the DOM.
const PROBE_END: &str = "<script>(function(){\
function coloured(c){if(!c)return false;c=c.trim().toLowerCase();\
var m=/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/.exec(c);\
if(m)return !(m[1]==m[2]&&m[2]==m[3]);\
m=/^rgba?\\((\\d+),\\s*(\\d+),\\s*(\\d+)/.exec(c);return !!m&&!(m[1]==m[2]&&m[2]==m[3]);}\
var figs=document.querySelectorAll('figure.kw-fig');var bad=[];\
figs.forEach(function(f){var svg=f.querySelector('svg');if(!svg){bad.push(f.id+':no-svg');return;}\
var r=svg.getBoundingClientRect();var n=0;\
svg.querySelectorAll('polyline,path,rect,circle,line,polygon').forEach(function(s){\
var b=s.getBBox();if(b.width<=0&&b.height<=0)return;\
if(coloured(s.getAttribute('fill'))||coloured(s.getAttribute('stroke')))n++;});\
if(n==0||r.width<50||r.height<50)bad.push(f.id+':'+n);});\
var pre=document.createElement('pre');pre.id='kw-check';\
pre.textContent='KWCHECK figures='+figs.length+' empty=['+bad.join(',')+'] errors=['+\
window.__kwErrors.join(' | ')+'] END';document.body.appendChild(pre);})();</script>";

#[test]
fn a_report_opens_in_a_headless_browser_with_every_figure_drawn() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform (tools/setup.sh installs PoCL)");
        return;
    }
    let Some(browser) = chromium() else {
        eprintln!(
            "SKIPPED: no chromium on PATH and KW_CHROMIUM unset (tools/setup.sh installs \
             Debian's chromium; this machine could not)"
        );
        return;
    };
    let dir = common::unique_dir("report");
    let tune = [
        "tune",
        "--bundled",
        "vector_add:4096",
        "--strategy",
        "exhaustive",
        "--budget",
        "96",
        "--samples",
        "3",
        "--log",
        "run.jsonl",
        "--wisdom-dir",
        "wis",
    ];
    kw(&dir, &tune);
    kw(
        &dir,
        &["log", "export", "run.jsonl", "--kt-cache", "kt.json"],
    );
    let sim = |strategy: &str, file: &str| {
        let out = kw(
            &dir,
            &[
                "simulate",
                "kt.json",
                "--strategy",
                strategy,
                "--budgets",
                "5,10,20",
                "--seeds",
                "2",
                "--json",
            ],
        );
        std::fs::write(dir.join(file), &out.stdout).unwrap();
    };
    sim("random,hybrid5", "sim.json");
    sim("ils", "peer.json");
    let out = kw(
        &dir,
        &[
            "report",
            "run.jsonl",
            "wis",
            "captures",
            "sim.json",
            "--peer",
            "peer.json",
            "-o",
            "rep",
        ],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("rep/index.html"), "{said}");
    let html = std::fs::read_to_string(dir.join("rep/index.html")).unwrap();
    // The sections, and what they say in words.
    for needle in [
        "Tuning run: vector_add",
        "Best so far by evaluation",
        "Best so far by wall time",
        "Configuration times",
        "within the best",
        "block_size_x",
        "Coverage",
        "Selection maps: vector_add",
        "Strategy comparison",
        "peer ils",
        "Captures",
        "vector_add_4096.kwcap",
    ] {
        assert!(html.contains(needle), "the report lacks `{needle}`");
    }
    // Self-contained: no script, no reference to anything outside the file (the SVG
    // namespace is a name, not a fetch).
    assert!(!html.contains("<script"), "the report holds a script");
    for attr in ["src=\"", "href=\"http", "url(", "@import"] {
        assert!(!html.contains(attr), "the report references `{attr}...`");
    }
    let figures = html.matches("<figure class=\"kw-fig\"").count();
    // 2 curves + histogram + 4 parameters + 3 selection maps + 1 strategy chart.
    assert!(figures >= 11, "{figures} figures");

    // The page as the browser sees it: probes before and after the report's own content.
    let probed = html
        .replacen("<head>", &format!("<head>{PROBE_HEAD}"), 1)
        .replacen("</body>", &format!("{PROBE_END}</body>"), 1);
    let page = dir.join("rep/probed.html");
    std::fs::write(&page, probed).unwrap();
    let shown = kw_core::child_env::command(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", dir.join("browser").display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running chromium");
    let dom = String::from_utf8_lossy(&shown.stdout);
    let log = String::from_utf8_lossy(&shown.stderr);
    let verdict = dom
        .split("<pre id=\"kw-check\">KWCHECK ")
        .nth(1)
        .and_then(|s| s.split(" END").next())
        .unwrap_or_else(|| panic!("the probe did not run; chromium said:\n{log}\n{dom}"));
    assert_eq!(
        verdict,
        format!("figures={figures} empty=[] errors=[]"),
        "chromium's console:\n{log}"
    );
    // Chromium's own log of the page's console (a second witness): the report has no
    // script and the probes write to the DOM only, so any console line is a fault.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{console:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
