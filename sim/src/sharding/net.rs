//! Each replica's own connection to the in-process server, which the harness can cut.
//!
//! * A **partition** cuts a replica's link: its writes and object reads fail at once
//!   (connection refused) and an answer still on its way is lost; its lists and watches
//!   hang, and its open watches stall (what the server sends waits, as in a TCP
//!   connection across a broken network) until the link heals, when it arrives. (Lists
//!   and watches hang rather than fail so that no reflector backs off: the sharder's
//!   informers back off with the default, jittered `ReflectorConfig`, which the ring does
//!   not let one set, and a jittered relist would make a seed's replay differ.)
//! * A **crash** kills one incarnation: its requests fail and its open watches stall
//!   forever; nothing it does reaches the server again (see also [`super::replica`]: its
//!   reconciles end at once).
//!
//! Requests to the ring's sharder Lease are served on a grid ([`LeaseGrid`]); see there.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::StreamExt;
use kubegen::client::{Body, BoxFuture, Transport, TransportError};
use kubegen_testserver::InProcess;
use parking_lot::Mutex;
use tokio::{
    sync::{Notify, oneshot},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

/// The link of one replica (its node): up, or cut by a partition.
///
/// Waiters are woken through one [`Notify`], in the order they started waiting (a
/// `tokio::sync::watch` channel spreads its receivers over several notifiers at random,
/// so the watches of a healed replica would resume in a different order each run).
#[derive(Debug, Default)]
pub struct Link {
    cut: AtomicBool,
    changed: Notify,
    /// When the last partition healed.
    healed: Mutex<Option<Instant>>,
}

impl Link {
    /// Whether requests get through.
    pub fn is_up(&self) -> bool {
        !self.cut.load(Ordering::SeqCst)
    }

    /// Cuts (`false`) or heals (`true`) the link.
    pub fn set_up(&self, up: bool) {
        if up {
            *self.healed.lock() = Some(Instant::now());
        }
        self.cut.store(!up, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Whether the link has been up since `since` (or longer).
    fn up_since(&self, since: Instant) -> bool {
        self.is_up() && self.healed.lock().is_none_or(|healed| healed <= since)
    }

    /// Waits until the link is up.
    pub async fn wait_up(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_up() {
                return;
            }
            changed.await;
        }
    }
}

/// When an incarnation's member elector gives its Lease up if no renewal succeeds before:
/// leader election's rule (`kubegen::leaderelection`'s `run`): the first round starts as
/// the Lease is acquired, each later one a retry period after the last renewal, and a round
/// ends the leadership at its renew deadline. The transport sees every renewal succeed, so
/// it knows that instant without a hook in the elector.
#[derive(Debug)]
pub struct Membership {
    retry: Duration,
    renew_deadline: Duration,
    deadline: Mutex<Option<Instant>>,
    changed: Notify,
}

impl Membership {
    /// A membership with the ring's retry period and renew deadline.
    pub fn new(retry: Duration, renew_deadline: Duration) -> Arc<Membership> {
        Arc::new(Membership {
            retry,
            renew_deadline,
            deadline: Mutex::new(None),
            changed: Notify::new(),
        })
    }

    /// A write of the member Lease succeeded now.
    fn renewed(&self) {
        let now = Instant::now();
        {
            let mut deadline = self.deadline.lock();
            *deadline = Some(match *deadline {
                None => now + self.renew_deadline,
                Some(_) => now + self.retry + self.renew_deadline,
            });
        }
        self.changed.notify_waiters();
    }

    /// Fires `leaving` when a renew deadline passes with no renewal, or returns when `stop`
    /// fires.
    pub async fn watch(self: Arc<Self>, leaving: CancellationToken, stop: CancellationToken) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let deadline = *self.deadline.lock();
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = &mut changed => {}
                () = async {
                    match deadline {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {
                    if *self.deadline.lock() == deadline {
                        leaving.cancel();
                        return;
                    }
                }
            }
        }
    }
}

/// The wire of one incarnation: its replica's link, and whether it is dead (crashed) or
/// stopping.
#[derive(Debug, Clone)]
pub struct Wire {
    /// The replica's link.
    pub link: Arc<Link>,
    /// Fired when the incarnation crashes.
    pub dead: CancellationToken,
    /// The incarnation's stop token (fired for a clean stop, or to reap a crashed one).
    pub stop: CancellationToken,
    /// Fired when the incarnation gives its membership up (it releases its member Lease
    /// on a clean stop, or misses a renew deadline: see [`Membership`]); its manager then
    /// stops.
    pub leaving: CancellationToken,
    /// The incarnation's member Lease renewals.
    pub membership: Arc<Membership>,
    /// When the grid last failed a request of this incarnation (see [`LeaseGrid`]).
    pub grid_failed_at: Arc<Mutex<Option<Instant>>>,
}

impl Wire {
    fn passes(&self) -> bool {
        self.link.is_up() && !self.dead.is_cancelled()
    }

    /// Waits until the wire passes again; never returns once the incarnation is dead.
    async fn wait_passes(&self) {
        loop {
            if self.dead.is_cancelled() {
                std::future::pending::<()>().await;
            }
            if self.link.is_up() {
                return;
            }
            tokio::select! {
                biased;
                () = self.dead.cancelled() => {}
                () = self.link.wait_up() => {}
            }
        }
    }
}

/// Serves the requests for one path (the ring's sharder Lease) on a grid of virtual time:
/// a request waits for the next multiple of `period` since the run began, and the requests
/// waiting for one tick go to the server in the order of their replicas (then arrival).
///
/// Why: a candidate that does not lead retries every retry period stretched by a random
/// fraction (client-go's `JitterUntil`, `kubegen::leaderelection`'s `JITTER_FACTOR`,
/// drawn from the thread's RNG), so which replica takes over the sharder Lease, and when,
/// would differ between two runs of one seed. With a period longer than the longest
/// stretched retry (1.2 × 200 ms + 200 ms) every candidate waits at every tick, and the
/// order at a tick is fixed: the election is a function of the seed. The leader renews at
/// most one period late (well within its renew deadline).
///
/// A partitioned replica's requests fail at once, and so do those a tick releases before
/// its link has been up again for a whole period: a candidate that was cut off sleeps its
/// stretched retries between failures, so its first attempt after the heal falls before
/// or after the next tick at random; the one after that tick it certainly waits for, and
/// only that one gets through. A request that follows a failed one at the same instant
/// (the slow path's read after a failed fast-path renewal) fails too: whichever request of
/// a round the tick met, the round fails whole.
///
/// A request that waits at the grid when its incarnation is told to stop, crashes, or
/// gives its membership up (see [`Wire::leaving`]) fails: whether a candidate waits there
/// or sleeps between its attempts at that moment is the jitter's doing, and either way it
/// then gives up at once. After that only a release (the leader's, on its way out) still
/// waits for a tick; any other request fails at once (a candidate that woke at the very
/// instant of the stop asks no more than one that slept through it).
#[derive(Debug)]
pub struct LeaseGrid {
    path: String,
    period: Duration,
    origin: Instant,
    waiting: Mutex<BTreeMap<(u32, u64), oneshot::Sender<()>>>,
    arrivals: AtomicU64,
}

impl LeaseGrid {
    /// A grid for requests to `path`.
    pub fn new(path: String, period: Duration) -> Arc<LeaseGrid> {
        Arc::new(LeaseGrid {
            path,
            period,
            origin: Instant::now(),
            waiting: Mutex::new(BTreeMap::new()),
            arrivals: AtomicU64::new(0),
        })
    }

    /// Releases the waiting requests at every tick, until `stop` fires.
    pub async fn run(self: Arc<Self>, stop: CancellationToken) {
        let mut tick = self.origin;
        loop {
            tick += self.period;
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep_until(tick) => {}
            }
            let due = std::mem::take(&mut *self.waiting.lock());
            for (_, release) in due {
                let _ = release.send(());
            }
        }
    }

    async fn wait(&self, rank: u32) {
        let (tx, rx) = oneshot::channel();
        let arrival = self.arrivals.fetch_add(1, Ordering::Relaxed);
        self.waiting.lock().insert((rank, arrival), tx);
        let _ = rx.await;
    }
}

/// The transport of one incarnation: the server's in-process front behind its [`Wire`].
#[derive(Debug, Clone)]
pub struct ReplicaTransport {
    /// The server.
    pub server: InProcess,
    /// The incarnation's wire.
    pub wire: Wire,
    /// The sharder Lease's grid.
    pub grid: Arc<LeaseGrid>,
    /// This replica's place in the grid's order.
    pub rank: u32,
    /// The path of this replica's member Lease.
    pub member_path: String,
    /// Where to note every request and its answer (`KUBEGEN_SIM_WIRE_LOG`, to debug a
    /// seed), with the incarnation's name.
    pub log: Option<(Arc<super::journal::Journal>, String)>,
}

impl Transport for ReplicaTransport {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let this = self.clone();
        Box::pin(async move {
            let Some((journal, who)) = this.log.clone() else {
                return this.exchange(request).await;
            };
            let line = format!("{} {}", request.method(), without_timeout(request.uri()));
            let answer = this.exchange(request).await;
            let outcome = match &answer {
                Ok(response) => response.status().to_string(),
                Err(error) => error.to_string(),
            };
            journal.event(format!("wire {who}: {line} -> {outcome}"));
            answer
        })
    }
}

impl ReplicaTransport {
    /// One request through the wire (see the module docs and [`LeaseGrid`]).
    async fn exchange(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, TransportError> {
        if request.method() == http::Method::PUT
            && request.uri().path() == self.member_path
            && is_release(request.body())
        {
            self.wire.leaving.cancel();
        }
        if request.uri().path() == self.grid.path {
            // A failed fast-path renewal is followed at once by a read (the slow path): it
            // fails with it, so that a round fails whole wherever the candidate was in it.
            if !self.wire.passes() || *self.wire.grid_failed_at.lock() == Some(Instant::now()) {
                return Err(TransportError::Connect("partitioned".into()));
            }
            // Once the incarnation stops, only a release still goes out; what waits when it
            // starts to stop is abandoned.
            let stopping = self.wire.stop.is_cancelled() || self.wire.leaving.is_cancelled();
            if stopping && !is_release(request.body()) {
                return Err(TransportError::Connect("abandoned".into()));
            }
            let (stop, leaving) = if stopping {
                (CancellationToken::new(), CancellationToken::new())
            } else {
                (self.wire.stop.clone(), self.wire.leaving.clone())
            };
            tokio::select! {
                biased;
                () = self.wire.dead.cancelled() => {
                    return Err(TransportError::Connect("abandoned".into()));
                }
                () = stop.cancelled() => {
                    return Err(TransportError::Connect("abandoned".into()));
                }
                () = leaving.cancelled() => {
                    return Err(TransportError::Connect("abandoned".into()));
                }
                () = self.grid.wait(self.rank) => {}
            }
            if !self.wire.link.up_since(Instant::now() - self.grid.period) {
                *self.wire.grid_failed_at.lock() = Some(Instant::now());
                return Err(TransportError::Connect("partitioned".into()));
            }
        }
        // A list or watch of a cut-off replica waits for the link (a read that hangs);
        // anything else fails at once.
        let list_or_watch =
            request.method() == http::Method::GET && request.uri().query().is_some();
        if list_or_watch {
            self.wire.wait_passes().await;
        } else if !self.wire.passes() {
            return Err(TransportError::Connect("partitioned".into()));
        }
        let member_write = is_member_write(&request, &self.member_path);
        let response = self.server.serve(request).await;
        if member_write && response.status().is_success() && self.wire.passes() {
            self.wire.membership.renewed();
        }
        if list_or_watch {
            self.wire.wait_passes().await;
        } else if !self.wire.passes() {
            return Err(TransportError::Body("connection lost".into()));
        }
        let (parts, body) = response.into_parts();
        let wire = self.wire.clone();
        // Every chunk (and the end) waits for the wire: a watch stalls while cut.
        let gated = futures::stream::unfold(
            (body.into_stream(), wire),
            |(mut stream, wire)| async move {
                let next = stream.next().await;
                wire.wait_passes().await;
                Some((next?, (stream, wire)))
            },
        );
        Ok(http::Response::from_parts(parts, Body::from_stream(gated)))
    }
}

/// `uri` without its `timeoutSeconds` (the sharder's informers draw it at random; nothing
/// the run depends on).
fn without_timeout(uri: &http::Uri) -> String {
    let text = uri.to_string();
    match text.find("timeoutSeconds=") {
        Some(at) => {
            let rest = &text[at..];
            let end = rest.find('&').map_or(text.len(), |e| at + e);
            format!("{}timeoutSeconds=..{}", &text[..at], &text[end..])
        }
        None => text,
    }
}

/// Whether `body` (a Lease update) releases the Lease: no holder.
fn is_release(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|lease| {
        lease
            .pointer("/spec/holderIdentity")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
    })
}

/// Whether `request` writes the member Lease at `member_path` with a holder: creates it
/// (a POST to its collection naming it) or renews it (a PUT that is no release).
fn is_member_write(request: &http::Request<Vec<u8>>, member_path: &str) -> bool {
    let path = request.uri().path();
    if request.method() == http::Method::PUT && path == member_path {
        return !is_release(request.body());
    }
    request.method() == http::Method::POST
        && member_path
            .rsplit_once('/')
            .is_some_and(|(collection, name)| {
                path == collection
                    && serde_json::from_slice::<serde_json::Value>(request.body()).is_ok_and(
                        |lease| {
                            lease
                                .pointer("/metadata/name")
                                .and_then(serde_json::Value::as_str)
                                == Some(name)
                        },
                    )
            })
}
