//! The server's internals that benchmarks (and the informer streaming test) drive directly
//! (engine writes without HTTP, a compiled CRD schema), and [`collection`], the target of
//! such writes. Not public API.

pub use crate::engine::{Target, WriteOptions};
pub use crate::schema::CrdSchema;

use crate::TestServer;

/// The collection of `resource` in `group`/`version` (`""` for the core group) in
/// `namespace` (`None`: cluster-scoped, or every namespace), as an engine write or list
/// targets it.
///
/// # Panics
///
/// When `server` does not serve that resource.
pub fn collection(
    server: &TestServer,
    (group, version, resource): (&str, &str, &str),
    namespace: Option<&str>,
) -> Target {
    let rt = server
        .engine()
        .registry()
        .get(group, version, resource)
        .unwrap_or_else(|| panic!("{group}/{version} {resource} is not served"));
    Target {
        rt,
        namespace: namespace.map(Into::into),
        name: None,
        subresource: None,
    }
}
