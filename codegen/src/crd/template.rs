//! The derive's schema templates: a type defined elsewhere is a hole, `{"$kubegen:hole":
//! n, ...}`, that the derived code fills at run time with `<T as kubegen::crd::Schema>::
//! schema()` (the same generator's output for `T`), the placeholder's other keys (the
//! field's description and markers) applied over it; a flattened hole is listed under
//! [`FLATTEN`] and merged into its object at run time. `kubegen::crd::fill` (runtime
//! crate) reads these keys.

use serde_json::Value;

/// The key of a hole in a derive's schema template.
pub const HOLE: &str = "$kubegen:hole";

/// The key of a derive template's list of flattened holes, `[{"hole": n, "optional":
/// bool}]`, whose properties (and, unless optional, required names) are merged into the
/// object at run time, exactly as the generator merges a flattened struct it can see.
pub const FLATTEN: &str = "$kubegen:flatten";

/// Whether `v` is a hole of a derive template.
pub fn is_hole(v: &Value) -> bool {
    v.get(HOLE).is_some()
}
