//! The queues between a reflector and whoever consumes its changes (client-go's `Queue`,
//! `FIFO`, `DeltaFIFO`, `RealFIFO`): the sink a reflector writes to, the queue an informer
//! drains and what it hands over, the keyed core and sync state the keyed queues share,
//! the change records, and the three queues.

pub(crate) mod core;
pub(crate) mod delta;
pub(crate) mod delta_fifo;
pub(crate) mod drain;
pub(crate) mod fifo;
pub(crate) mod real_fifo;
pub(crate) mod sink;
pub(crate) mod sync_state;
