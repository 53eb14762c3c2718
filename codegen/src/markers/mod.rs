//! Markers: client-go's comment tags read from doc comments, and the same keys written
//! as `#[resource(...)]` attribute arguments.
//!
//! * [`vocabulary`]: the one table of every marker (key, value kind, where it may appear,
//!   attribute spellings); recognition, the attribute mapping and suggestions read it.
//! * [`raw`]: doc lines and attribute arguments → [`RawMarker`]s.
//! * [`value`]: a raw marker's value read by its kind; unknown keys in the namespaces
//!   this generator owns (`genclient*`, `k8s:deepcopy-gen*`, `kubegen:*`) are errors,
//!   with a "did you mean" when a known key is one or two edits away. Other markers
//!   (`+optional`, `+kubebuilder:...`) are ignored.
//! * [`type_markers`]: the markers of one item, with duplicate and placement checks.
//!
//! Attribute keys map onto marker keys: `group` → `groupName`, `plural` →
//! `resourceName`, `version` → `kubegen:version`, `kind` → `kubegen:kind`,
//! `namespaced` → `kubegen:namespaced`, `resource_impl` → `kubegen:resourceImpl`,
//! `deepcopy` → `k8s:deepcopy-gen`, `genclient` → `genclient`, and every `genclient:`
//! key by its name (`noStatus` or `no_status`, `onlyVerbs = "get,list"`,
//! `method = "Scale,verb=get,subresource=scale"`). kube's `inherit` key is recognised
//! (the type then already implements `Resource`).

pub mod raw;
pub mod type_markers;
pub mod value;
pub mod vocabulary;

pub use raw::{RawMarker, has_inherit, parse_marker_line};
pub use type_markers::{Found, TypeMarkers};
pub use value::{Value, interpret};
