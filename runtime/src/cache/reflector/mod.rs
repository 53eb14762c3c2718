//! Listing and watching into a queue (client-go's `Reflector` and `ListWatch`): the
//! reflector's state machine, the [`ListerWatcher`](crate::cache::ListerWatcher) it reads
//! from with its typed and metadata-only implementations, the metrics around any of them,
//! the idle timeout of a watch and the backoff between attempts.

pub(crate) mod backoff;
pub(crate) mod list_watch;
pub(crate) mod metered;
#[allow(clippy::module_inception)]
pub(crate) mod reflector;
pub(crate) mod watch_idle;
