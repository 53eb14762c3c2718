//! [`HasApplyConfiguration`]: a type's apply configuration, by type.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// The apply configuration of a type: the generated `…ApplyConfiguration` of a struct
/// (all fields optional), the type itself for a scalar or an enum (set as a whole).
///
/// Generated configurations name a field's configuration as
/// `<T as HasApplyConfiguration>::ApplyConfiguration`, so a field of a type from another
/// package, crate or the built-in groups needs no import of its configuration. The
/// generators implement it for every type they see (a struct's configuration, or the type
/// itself for enums and tuple structs); a field type from elsewhere implements it by hand,
/// usually as itself:
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// pub struct Rgb(u8, u8, u8);
///
/// impl kubegen::applyconfig::HasApplyConfiguration for Rgb {
///     type ApplyConfiguration = Rgb;
/// }
/// ```
pub trait HasApplyConfiguration {
    /// The configuration (`Self` for values applied as a whole).
    type ApplyConfiguration: serde::Serialize + serde::de::DeserializeOwned + Clone;
}

/// Values applied as a whole: the configuration is the value.
macro_rules! applied_whole {
    ($($ty:ty),* $(,)?) => {$(
        impl HasApplyConfiguration for $ty {
            type ApplyConfiguration = $ty;
        }
    )*};
}

applied_whole!(
    bool,
    char,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    String,
    serde_json::Value,
    k8s_openapi::ByteString,
);

impl<T: HasApplyConfiguration> HasApplyConfiguration for Option<T> {
    type ApplyConfiguration = T::ApplyConfiguration;
}

impl<T: HasApplyConfiguration> HasApplyConfiguration for Box<T> {
    type ApplyConfiguration = Box<T::ApplyConfiguration>;
}

impl<T: HasApplyConfiguration> HasApplyConfiguration for Vec<T> {
    type ApplyConfiguration = Vec<T::ApplyConfiguration>;
}

impl<T: HasApplyConfiguration> HasApplyConfiguration for VecDeque<T> {
    type ApplyConfiguration = Vec<T::ApplyConfiguration>;
}

/// A set is applied as a whole (its elements have no fields of their own to own).
impl<T> HasApplyConfiguration for BTreeSet<T>
where
    T: Ord + Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    type ApplyConfiguration = BTreeSet<T>;
}

impl<V: HasApplyConfiguration> HasApplyConfiguration for BTreeMap<String, V> {
    type ApplyConfiguration = BTreeMap<String, V::ApplyConfiguration>;
}

impl<V: HasApplyConfiguration, S> HasApplyConfiguration for HashMap<String, V, S> {
    type ApplyConfiguration = BTreeMap<String, V::ApplyConfiguration>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same<A: 'static, B: 'static>() -> bool {
        std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
    }

    #[test]
    fn collections_map_their_elements_and_wrappers_disappear() {
        type Of<T> = <T as HasApplyConfiguration>::ApplyConfiguration;
        assert!(same::<Of<Option<i32>>, i32>());
        assert!(same::<Of<Vec<Option<String>>>, Vec<String>>());
        assert!(same::<
            Of<HashMap<String, Vec<u8>>>,
            BTreeMap<String, Vec<u8>>,
        >());
        assert!(same::<Of<Box<bool>>, Box<bool>>());
    }
}
