//! The shared informer (client-go's `sharedIndexInformer`): its handle and builder, its
//! lifecycle (reflector plus delta loop), handler registration, the application of popped
//! changes to the cache (client-go's `processDeltas`), and the fan-out to handlers.

pub(crate) mod apply;
pub(crate) mod builder;
pub(crate) mod handle;
pub(crate) mod handler;
pub(crate) mod lifecycle;
pub(crate) mod processor;
pub(crate) mod registration;

#[cfg(test)]
mod tests;
