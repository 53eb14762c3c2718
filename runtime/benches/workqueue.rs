//! Workqueue throughput: add + get + done over 10k distinct keys with 1, 2 and 8 worker
//! tasks, against an unbounded tokio mpsc channel carrying the same keys (the floor).
//!
//! `cargo bench -p kubegen --bench workqueue` (add `-- --quick` for fewer rounds, or
//! `-- --runs R --rounds N`; `hack/bench-workqueue.sh` runs it). Prints, per configuration,
//! the median time per round of 10k keys, items per second, and the queue's throughput over
//! the channel's (`vs mpsc`, 1.0 = as fast as the channel): the median and the min–max
//! over R runs (default 5), each run's figure being the median of its N (default 31)
//! paired rounds.
//!
//! Like a controller's queue, each queue (and the channel) is long-lived: workers are
//! spawned once and every round pushes the 10k keys through the same queue, so the figures
//! are steady-state throughput, not allocation warm-up.
//!
//! The machine may be busy, so the channel and the queue are interleaved: every queue round
//! runs next to a channel round (the two take turns going first), and the ratio is taken
//! within that pair. A run's ratio is the median of its per-pair ratios, so a slow patch of
//! time hurts the channel and the queue alike instead of skewing one of them. The channel
//! row shows the median over all its rounds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kubegen::workqueue::{Queue, RateLimitingQueue};
use tokio::runtime::Runtime;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const KEYS: usize = 10_000;

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("default/object-{i}")).collect()
}

/// Counts processed items and wakes the producer when a round's target is reached.
#[derive(Default)]
struct Progress {
    processed: AtomicUsize,
    target: AtomicUsize,
    round_done: Notify,
}

impl Progress {
    fn item_done(&self) {
        let n = self.processed.fetch_add(1, Ordering::AcqRel) + 1;
        if n == self.target.load(Ordering::Acquire) {
            self.round_done.notify_one();
        }
    }

    async fn run_round(&self, produce: impl FnOnce()) -> Duration {
        let start = Instant::now();
        let target = self.processed.load(Ordering::Acquire) + KEYS;
        self.target.store(target, Ordering::Release);
        produce();
        while self.processed.load(Ordering::Acquire) < target {
            self.round_done.notified().await;
        }
        start.elapsed()
    }
}

/// Where a round's keys go.
enum Sink {
    Channel(tokio::sync::mpsc::UnboundedSender<String>),
    Queue(Queue<String>),
}

/// One configuration under test: a sink with its consumers already running.
struct Subject {
    name: String,
    sink: Sink,
    progress: Arc<Progress>,
    consumers: Vec<JoinHandle<()>>,
    samples: Vec<Duration>,
}

impl Subject {
    /// The channel floor: one consumer task.
    fn channel() -> Self {
        let progress = Arc::new(Progress::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let consumer = tokio::spawn({
            let progress = Arc::clone(&progress);
            async move {
                while let Some(item) = rx.recv().await {
                    std::hint::black_box(&item);
                    progress.item_done();
                }
            }
        });
        Self {
            name: "mpsc unbounded, 1 consumer".to_owned(),
            sink: Sink::Channel(tx),
            progress,
            consumers: vec![consumer],
            samples: Vec::new(),
        }
    }

    /// A queue with `workers` tasks doing get + done.
    fn queue(name: String, queue: Queue<String>, workers: usize) -> Self {
        let progress = Arc::new(Progress::default());
        let consumers = (0..workers)
            .map(|_| {
                let (queue, progress) = (queue.clone(), Arc::clone(&progress));
                tokio::spawn(async move {
                    while let Some(item) = queue.get().await {
                        std::hint::black_box(&item);
                        queue.done(&item);
                        progress.item_done();
                    }
                })
            })
            .collect();
        Self {
            name,
            sink: Sink::Queue(queue),
            progress,
            consumers,
            samples: Vec::new(),
        }
    }

    /// Pushes the keys through once and returns the elapsed time.
    async fn round(&self, items: Vec<String>) -> Duration {
        self.progress
            .run_round(|| match &self.sink {
                Sink::Channel(tx) => {
                    for item in items {
                        let _ = tx.send(item);
                    }
                }
                Sink::Queue(queue) => {
                    for item in items {
                        queue.add(item);
                    }
                }
            })
            .await
    }

    async fn stop(self) {
        match self.sink {
            Sink::Channel(tx) => drop(tx),
            Sink::Queue(queue) => queue.shut_down(),
        }
        for consumer in self.consumers {
            let _ = consumer.await;
        }
    }
}

fn median<T: Copy + PartialOrd>(mut samples: Vec<T>) -> T {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    samples[samples.len() / 2]
}

/// One result row: median round time, median time of the channel rounds it was paired
/// with, and the ratio to the channel of each run (the median of that run's per-pair
/// ratios).
struct Row {
    name: String,
    round: Duration,
    floor: Duration,
    run_ratios: Vec<f64>,
}

/// Runs each queue built by `queues` for `runs` runs of `rounds` rounds (after one warm-up
/// round per queue), each round paired with a channel round, and returns the channel's row
/// first. The runs take turns over the queues (run 1 of every queue, then run 2 ...), so a
/// slow patch of the machine is spread over the queues instead of hitting one of them.
fn run(
    runtime: &Runtime,
    runs: usize,
    rounds: usize,
    queues: impl FnOnce() -> Vec<(String, Queue<String>, usize)>,
) -> Vec<Row> {
    let keys = keys();
    runtime.block_on(async {
        let mut channel = Subject::channel();
        let mut subjects: Vec<_> = queues()
            .into_iter()
            .map(|(name, queue, workers)| Subject::queue(name, queue, workers))
            .collect();
        // Warm-up: one round of the channel and of each queue.
        channel.round(keys.clone()).await;
        for subject in &subjects {
            subject.round(keys.clone()).await;
        }
        let mut run_ratios = vec![Vec::with_capacity(runs); subjects.len()];
        let mut floors = vec![Vec::new(); subjects.len()];
        for _ in 0..runs {
            for (i, subject) in subjects.iter_mut().enumerate() {
                let mut ratios = Vec::with_capacity(rounds);
                for round in 0..rounds {
                    // Alternate which side goes first, so neither always runs in the wake
                    // of the other.
                    let (floor, t) = if round % 2 == 0 {
                        let floor = channel.round(keys.clone()).await;
                        (floor, subject.round(keys.clone()).await)
                    } else {
                        let t = subject.round(keys.clone()).await;
                        (channel.round(keys.clone()).await, t)
                    };
                    channel.samples.push(floor);
                    floors[i].push(floor);
                    subject.samples.push(t);
                    ratios.push(floor.as_secs_f64() / t.as_secs_f64());
                }
                run_ratios[i].push(median(ratios));
            }
        }
        let mut rows = vec![Row {
            name: channel.name.clone(),
            round: median(channel.samples.clone()),
            floor: median(channel.samples.clone()),
            run_ratios: vec![1.0],
        }];
        for ((subject, ratios), floors) in subjects.into_iter().zip(run_ratios).zip(floors) {
            rows.push(Row {
                name: subject.name.clone(),
                round: median(subject.samples.clone()),
                floor: median(floors),
                run_ratios: ratios,
            });
            subject.stop().await;
        }
        channel.stop().await;
        rows
    })
}

fn print_table(title: &str, rows: &[Row]) {
    let per_sec = |d: Duration| KEYS as f64 / d.as_secs_f64();
    println!("{title}");
    println!(
        "{:<38} {:>11} {:>12} {:>15} {:>9} {:>13}",
        "configuration", "round", "items/s", "paired mpsc", "vs mpsc", "min-max"
    );
    for row in rows {
        let min = row.run_ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = row.run_ratios.iter().copied().fold(0.0, f64::max);
        println!(
            "{:<38} {:>8.3} ms {:>12.0} {:>12.3} ms {:>8.2}x {:>6.2}-{:.2}x",
            row.name,
            row.round.as_secs_f64() * 1e3,
            per_sec(row.round),
            row.floor.as_secs_f64() * 1e3,
            median(row.run_ratios.clone()),
            min,
            max,
        );
    }
}

/// The value of `--name N` on the command line, if any.
fn arg_value(name: &str) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|arg| arg == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|value| value.parse().ok())
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let runs = arg_value("--runs")
        .unwrap_or(if quick { 3 } else { 5 })
        .max(1);
    let rounds = arg_value("--rounds")
        .unwrap_or(if quick { 9 } else { 31 })
        .max(1);
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rows = run(&multi, runs, rounds, || {
        let mut queues: Vec<_> = [1, 2, 8]
            .into_iter()
            .map(|workers| (format!("Queue, {workers} worker(s)"), Queue::new(), workers))
            .collect();
        for workers in [1, 8] {
            let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
            queues.push((
                format!("RateLimitingQueue, {workers} worker(s)"),
                queue.as_queue().clone(),
                workers,
            ));
        }
        queues
    });

    // The same on a single-threaded runtime: no lock contention, the raw cost per item.
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let single_rows = run(&single, runs, rounds, || {
        vec![("Queue, 1 worker".to_owned(), Queue::new(), 1)]
    });

    println!();
    print_table(
        &format!(
            "workqueue: add+get+done of {KEYS} distinct keys; vs mpsc = median over {runs} runs \
             of each run's median per-pair ratio ({rounds} interleaved rounds a run), min-max \
             over the runs; multi-thread runtime (2 threads)"
        ),
        &rows,
    );
    println!();
    print_table("single-thread runtime (no contention)", &single_rows);
}
