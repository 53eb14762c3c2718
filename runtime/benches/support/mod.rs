//! What the side-by-side benches (`informer.rs`, `pods.rs`) share: the child process
//! protocol, reading a process's peak RSS and CPU from /proc, medians and ratios, and the
//! bench's settings from the environment.
//!
//! The protocol: the parent serves the objects and starts `<bench> --child <workload> <url>
//! <n>` once per workload and round; the child prints report lines (`<phase> <seconds>
//! <peak KiB> <rss KiB> <cpu ms> <user ms> <sys ms> <minor faults>`, see [`report`]) and
//! `ready` when it waits for the parent's `go [argument]` line on its stdin (see
//! [`wait_for_parent`]); the parent reads them with [`ChildProcess`].
//!
//! Each bench compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Lines, Write},
    process::{ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

use kubegen::{
    cache::{SharedIndexInformer, UnstartedInformer},
    client::{Client, Config},
};
use tokio_util::sync::CancellationToken;

/// A field of /proc/self/status in KiB (`VmHWM:`, `VmRSS:`).
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Resets VmHWM to the current RSS, so the next report's peak is the next phase's own.
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A kubegen client for the test server at `url`, client-side throttling off.
pub fn kubegen_client(url: &str) -> Client {
    Client::try_from_config(Config::new(url.parse().unwrap()).with_rate_limit(-1.0, 0)).unwrap()
}

/// A kube-rs client for the test server at `url` (kube-rs does not throttle).
pub fn kube_rs_client(url: &str) -> kube::Client {
    kube::Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap()
}

/// Waits for the parent's go-ahead line on stdin; returns what follows `go`.
pub fn wait_for_parent() -> String {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    line.trim().trim_start_matches("go").trim().to_owned()
}

/// Whether `obj` carries the label `stream=<done>` the parent sets once all updates are in.
pub fn stream_done<T: kube_core::Resource>(obj: &T, done: &str) -> bool {
    obj.meta()
        .labels
        .as_ref()
        .and_then(|l| l.get("stream"))
        .is_some_and(|v| v == done)
}

/// Fields of /proc/self/stat from the 3rd on (the command name, field 2, may hold spaces,
/// so they are counted from its closing parenthesis).
fn stat_fields() -> Vec<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect()
}

/// User and system CPU time (all threads) this process has used, in milliseconds: fields 14
/// and 15 of /proc/self/stat, in clock ticks (100 per second on Linux).
pub fn user_sys_ms() -> (u64, u64) {
    let fields = stat_fields();
    let ms = |i: usize| fields.get(i).map_or(0, |ticks| ticks * 10);
    (ms(11), ms(12))
}

/// Minor page faults of this process so far (field 10 of /proc/self/stat): each is a page
/// the kernel had to map and zero, which is most of a cache's system time.
fn minor_faults() -> u64 {
    stat_fields().get(7).copied().unwrap_or(0)
}

/// Prints `<phase> <seconds> <peak KiB> <rss KiB> <cpu ms> <user ms> <sys ms> <minor faults>`
/// (CPU and faults are the process's totals so far: the parent subtracts two reports).
/// With `KUBEGEN_BENCH_SYNC_ONLY` set, the `synced` report ends the process.
pub fn report(phase: &str, secs: f64) {
    let (user, sys) = user_sys_ms();
    println!(
        "{phase} {secs:.3} {} {} {} {user} {sys} {}",
        status_kib("VmHWM:"),
        status_kib("VmRSS:"),
        user + sys,
        minor_faults()
    );
    std::io::stdout().flush().unwrap();
    if phase == "synced" && std::env::var_os("KUBEGEN_BENCH_SYNC_ONLY").is_some() {
        std::process::exit(0);
    }
}

/// Runs `informer` and waits until it has synced `n` objects; returns it, its stop token
/// and the seconds the sync took.
pub async fn run_until_synced<T: kubegen::Object>(
    informer: UnstartedInformer<T>,
    n: usize,
) -> (SharedIndexInformer<T>, CancellationToken, f64) {
    let stop = CancellationToken::new();
    let start = Instant::now();
    let informer = {
        let handle = informer.handle();
        tokio::spawn(informer.run(stop.clone()));
        handle
    };
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(informer.indexer().len(), n);
    (informer, stop, secs)
}

/// Marks the start of the stream phase for a profiler (callgrind's `--zero-before`).
#[inline(never)]
pub fn stream_phase_begins() {
    std::hint::black_box(());
}

/// Marks the end of the stream phase for a profiler (callgrind's `--dump-before`).
#[inline(never)]
pub fn stream_phase_ends() {
    std::hint::black_box(());
}

/// Polls `marker` every 2 ms until it returns true; returns the seconds that took.
pub async fn wait_until(mut marker: impl FnMut() -> bool) -> f64 {
    let start = Instant::now();
    while !marker() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    start.elapsed().as_secs_f64()
}

/// The child's side of `main`: `--child <workload> <url> <n>` runs `child` on a runtime of
/// `KUBEGEN_BENCH_WORKERS` worker threads (2 by default) and returns true.
pub fn run_child_args<F, Fut>(args: &[String], child: F) -> bool
where
    F: FnOnce(String, String, usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let Some(i) = args.iter().position(|a| a == "--child") else {
        return false;
    };
    let (workload, url, n) = (
        args[i + 1].clone(),
        args[i + 2].clone(),
        args[i + 3].parse().unwrap(),
    );
    let workers = std::env::var("KUBEGEN_BENCH_WORKERS").map_or(2, |v| v.parse().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(child(workload, url, n));
    true
}

/// The figures of a report line (see [`report`]) after its phase word (a line with no
/// figures, as `ready`, parses as zeros).
pub fn parse_figures(figures: &str) -> Line {
    let mut parts = figures.split_whitespace();
    let secs = parts.next().map_or(0.0, |v| v.parse().unwrap());
    let mut next = || parts.next().map_or(0, |v| v.parse().unwrap());
    Line {
        secs,
        hwm: next(),
        rss: next(),
        cpu: next(),
        user: next(),
        sys: next(),
        faults: next(),
    }
}

/// One report line of a child (see [`report`]).
#[derive(Clone, Copy, Default, Debug)]
pub struct Line {
    pub secs: f64,
    pub hwm: u64,
    pub rss: u64,
    pub cpu: u64,
    pub user: u64,
    pub sys: u64,
    pub faults: u64,
}

/// The parent's side of a child process: its report lines and its go-aheads.
pub struct ChildProcess {
    child: std::process::Child,
    /// `None` once [`forward_lines`](ChildProcess::forward_lines) took them.
    lines: Option<Lines<BufReader<ChildStdout>>>,
}

impl ChildProcess {
    /// Starts `<this bench> --child <workload> <url> <n>`.
    pub fn spawn(workload: &str, url: &str, n: usize) -> ChildProcess {
        Self::spawn_with_env(workload, url, n, &[])
    }

    /// [`ChildProcess::spawn`] with `env` added to the child's environment.
    pub fn spawn_with_env(
        workload: &str,
        url: &str,
        n: usize,
        env: &[(&str, &str)],
    ) -> ChildProcess {
        // KUBEGEN_BENCH_CHILD_WRAPPER prefixes the command line (a profiler, split at spaces).
        let exe = std::env::current_exe().unwrap();
        let wrapper = std::env::var("KUBEGEN_BENCH_CHILD_WRAPPER").unwrap_or_default();
        let mut words = wrapper.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(words).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(["--child", workload, url, &n.to_string()])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Some(BufReader::new(child.stdout.take().unwrap()).lines());
        ChildProcess { child, lines }
    }

    /// Reads lines until the one for `phase`, and parses it (a line with no figures, as
    /// `ready`, parses as zeros). Panics if the child ends first.
    pub fn expect(&mut self, phase: &str) -> Line {
        let lines = self.lines.as_mut().expect("the lines were forwarded");
        loop {
            let line = match lines.next() {
                Some(line) => line.unwrap(),
                None => panic!(
                    "the child ended before reporting `{phase}`: {:?}",
                    self.child.wait()
                ),
            };
            let (first, figures) = line.split_once(' ').unwrap_or((&line, ""));
            if first == phase {
                return parse_figures(figures);
            }
        }
    }

    /// From now on a thread sends each line of the child's, with `tag`, to `to` (for a
    /// parent that reads several children at once; [`expect`](Self::expect) is over).
    pub fn forward_lines(&mut self, tag: usize, to: std::sync::mpsc::Sender<(usize, String)>) {
        let lines = self.lines.take().expect("the lines were forwarded");
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if to.send((tag, line)).is_err() {
                    return;
                }
            }
        });
    }

    /// Waits (at most `within`) for the child to exit on its own, as after a last `go`
    /// (a profiler wrapping it then writes its data); whether it did.
    pub fn wait_for_exit(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Sends `go <arg>` (see [`wait_for_parent`]).
    pub fn go(&mut self, arg: &str) {
        writeln!(self.child.stdin.as_mut().unwrap(), "go {arg}").unwrap();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The median of `values` (the upper one of an even count).
pub fn median<T: Copy + PartialOrd>(values: impl IntoIterator<Item = T>) -> T {
    let mut v: Vec<T> = values.into_iter().collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// `ours / theirs` per round (rounds pair the two workloads), as `median (min–max)`.
pub fn ratio_spread<M>(ours: &[M], theirs: &[M], figure: impl Fn(&M) -> f64) -> String {
    let mut ratios: Vec<f64> = ours
        .iter()
        .zip(theirs)
        .map(|(a, b)| figure(a) / figure(b))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (lo, hi) = (ratios[0], ratios[ratios.len() - 1]);
    format!("{:.2} ({lo:.2}–{hi:.2})", ratios[ratios.len() / 2])
}

/// The order of the workloads in round `round`: as given in even rounds, reversed in odd
/// ones, so no workload always runs first (or last).
pub fn round_order(workloads: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..workloads).collect();
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

/// `KUBEGEN_BENCH_SIZES` (comma-separated), else `default`.
pub fn env_sizes(default: &[usize]) -> Vec<usize> {
    match std::env::var("KUBEGEN_BENCH_SIZES") {
        Ok(v) => v.split(',').map(|n| n.trim().parse().unwrap()).collect(),
        Err(_) => default.to_vec(),
    }
}

/// `KUBEGEN_BENCH_WORKLOADS` (comma-separated), else `default`.
pub fn env_workloads(default: &str) -> Vec<String> {
    std::env::var("KUBEGEN_BENCH_WORKLOADS")
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|w| w.trim().to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// `KUBEGEN_BENCH_ROUNDS`, else `default`.
pub fn env_rounds(default: usize) -> usize {
    std::env::var("KUBEGEN_BENCH_ROUNDS").map_or(default, |v| v.parse().unwrap())
}

/// The parent's runtime (the test server's): two worker threads.
pub fn server_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
