//! `DeepCopy`: owned, independent copies of API objects (deepcopy-gen's `DeepCopy` /
//! `DeepCopyInto`).
//!
//! Objects read from a cache are shared `Arc<K>` values and must never be mutated; a
//! controller that wants to change one takes a deep copy first. In Go that is
//! `obj.DeepCopy()`; here it is [`DeepCopy::deep_copy`]. [`DeepCopy::deep_copy_into`]
//! overwrites an existing value and reuses its allocations (string buffers, vector and
//! map storage), which makes repeated copies into a scratch object cheap.
//!
//! Impls are provided for primitives, `String`, `Option`, `Vec`, `VecDeque`, `BTreeMap`,
//! `BTreeSet`, `HashMap`, `HashSet`, `Box`, `Arc`, `Rc`, tuples and arrays (of `DeepCopy`
//! types), for `serde_json::Value`, and field by field for `ObjectMeta` and
//! `OwnerReference`. Generated code (`kubegen-codegen`, `#[derive(kubegen::Resource)]`,
//! `#[derive(kubegen::deepcopy::DeepCopy)]`) implements it field by field.
//!
//! # Field types
//!
//! A generated impl accepts a field of any type that implements `DeepCopy` or `Clone`,
//! with no annotation: types of the same API tree, every k8s-openapi type whatever `v1_*`
//! feature the binary picks (`PodTemplateSpec`, `Toleration`, `Quantity`, `IntOrString`,
//! `Time`, `ByteString` ...), `serde_json::Value`, types of other crates (chrono, url,
//! uuid) and containers of any of them (`Vec<Taint>`, `Option<BTreeMap<String,
//! Quantity>>`). Each field is copied through its `DeepCopy` impl when it has one
//! (keeping `deep_copy_into`'s allocation reuse) and through `Clone::clone` /
//! `clone_from` otherwise, chosen at compile time per field (see `__private`), as
//! deepcopy-gen calls `DeepCopyInto` where a type has it and assigns otherwise. For these
//! plain data types `Clone` is a deep copy; a container is cloned whole when its element
//! type has no `DeepCopy` impl. One exception: an `Arc<T>` / `Rc<T>` of a type without
//! `DeepCopy` is cloned, so the copy shares the (immutable) pointee.
//!
//! `ObjectMeta` and `OwnerReference`, whose fields are the same in every Kubernetes
//! version k8s-openapi supports, are copied field by field so `deep_copy_into` reuses the
//! target's metadata allocations. No other k8s-openapi type implements `DeepCopy`: their
//! field sets differ between `v1_*` features, and `Clone` already copies them deeply. To
//! copy one directly, call `clone()`. Types of your own crate that want `deep_copy()`
//! without a field-wise impl can use
//! [`impl_deep_copy_via_clone!`](crate::impl_deep_copy_via_clone).
//!
//! `Arc<T>` and `Rc<T>` of `DeepCopy` types are copied deeply: the copy gets a fresh
//! allocation holding a deep copy of the pointee, so mutating the copy through
//! `Arc::make_mut` never touches the original (a shallow `Arc::clone` would).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;
use std::sync::Arc;

#[cfg(feature = "derive")]
pub use kubegen_derive::DeepCopy;

#[doc(hidden)]
pub mod __private;

/// A type whose values can be copied into independent, owned values.
///
/// The two methods must agree: after `src.deep_copy_into(&mut dst)`, `dst` equals
/// `src.deep_copy()`.
pub trait DeepCopy: Sized {
    /// Returns an independent copy of `self`.
    fn deep_copy(&self) -> Self;

    /// Overwrites `out` with a copy of `self`, reusing `out`'s allocations where possible.
    fn deep_copy_into(&self, out: &mut Self) {
        *out = self.deep_copy();
    }
}

/// Implements [`DeepCopy`] through `Clone` for the listed types of the calling crate.
///
/// Use it for leaf types (newtypes around strings or numbers, or types from other crates
/// wrapped in a local type) where a field-wise copy brings nothing.
///
/// ```
/// #[derive(Clone, PartialEq, Debug)]
/// struct Token(String);
/// kubegen::impl_deep_copy_via_clone!(Token);
///
/// use kubegen::deepcopy::DeepCopy;
/// assert_eq!(Token("a".into()).deep_copy(), Token("a".into()));
/// ```
#[macro_export]
macro_rules! impl_deep_copy_via_clone {
    ($($ty:ty),* $(,)?) => {
        $(
            impl $crate::deepcopy::DeepCopy for $ty {
                fn deep_copy(&self) -> Self {
                    ::core::clone::Clone::clone(self)
                }
                fn deep_copy_into(&self, out: &mut Self) {
                    ::core::clone::Clone::clone_from(out, self);
                }
            }
        )*
    };
}

macro_rules! copy_types {
    ($($ty:ty),* $(,)?) => {
        $(
            impl DeepCopy for $ty {
                #[inline]
                fn deep_copy(&self) -> Self {
                    *self
                }
                #[inline]
                fn deep_copy_into(&self, out: &mut Self) {
                    *out = *self;
                }
            }
        )*
    };
}

copy_types!(
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    ()
);

impl DeepCopy for String {
    fn deep_copy(&self) -> Self {
        self.clone()
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.clone_from(self);
    }
}

impl<T: DeepCopy> DeepCopy for Option<T> {
    fn deep_copy(&self) -> Self {
        self.as_ref().map(DeepCopy::deep_copy)
    }

    fn deep_copy_into(&self, out: &mut Self) {
        match (self, out) {
            (Some(src), Some(dst)) => src.deep_copy_into(dst),
            (src, dst) => *dst = src.deep_copy(),
        }
    }
}

impl<T: DeepCopy> DeepCopy for Vec<T> {
    fn deep_copy(&self) -> Self {
        self.iter().map(DeepCopy::deep_copy).collect()
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.truncate(self.len());
        let (head, tail) = self.split_at(out.len());
        for (src, dst) in head.iter().zip(out.iter_mut()) {
            src.deep_copy_into(dst);
        }
        out.extend(tail.iter().map(DeepCopy::deep_copy));
    }
}

impl<T: DeepCopy> DeepCopy for VecDeque<T> {
    fn deep_copy(&self) -> Self {
        self.iter().map(DeepCopy::deep_copy).collect()
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.truncate(self.len());
        let reused = out.len();
        for (src, dst) in self.iter().zip(out.iter_mut()) {
            src.deep_copy_into(dst);
        }
        out.extend(self.iter().skip(reused).map(DeepCopy::deep_copy));
    }
}

impl<T: DeepCopy, const N: usize> DeepCopy for [T; N] {
    fn deep_copy(&self) -> Self {
        std::array::from_fn(|i| self[i].deep_copy())
    }

    fn deep_copy_into(&self, out: &mut Self) {
        for (src, dst) in self.iter().zip(out.iter_mut()) {
            src.deep_copy_into(dst);
        }
    }
}

impl<K: Ord + DeepCopy, V: DeepCopy> DeepCopy for BTreeMap<K, V> {
    fn deep_copy(&self) -> Self {
        self.iter()
            .map(|(k, v)| (k.deep_copy(), v.deep_copy()))
            .collect()
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.retain(|k, _| self.contains_key(k));
        for (k, v) in self {
            match out.get_mut(k) {
                Some(dst) => v.deep_copy_into(dst),
                None => {
                    out.insert(k.deep_copy(), v.deep_copy());
                }
            }
        }
    }
}

impl<T: Ord + DeepCopy> DeepCopy for BTreeSet<T> {
    fn deep_copy(&self) -> Self {
        self.iter().map(DeepCopy::deep_copy).collect()
    }
}

impl<K, V, S> DeepCopy for HashMap<K, V, S>
where
    K: Eq + Hash + DeepCopy,
    V: DeepCopy,
    S: BuildHasher + Clone,
{
    fn deep_copy(&self) -> Self {
        let mut out = HashMap::with_capacity_and_hasher(self.len(), self.hasher().clone());
        out.extend(self.iter().map(|(k, v)| (k.deep_copy(), v.deep_copy())));
        out
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.retain(|k, _| self.contains_key(k));
        for (k, v) in self {
            match out.get_mut(k) {
                Some(dst) => v.deep_copy_into(dst),
                None => {
                    out.insert(k.deep_copy(), v.deep_copy());
                }
            }
        }
    }
}

impl<T, S> DeepCopy for HashSet<T, S>
where
    T: Eq + Hash + DeepCopy,
    S: BuildHasher + Clone,
{
    fn deep_copy(&self) -> Self {
        let mut out = HashSet::with_capacity_and_hasher(self.len(), self.hasher().clone());
        out.extend(self.iter().map(DeepCopy::deep_copy));
        out
    }
}

impl<T: DeepCopy> DeepCopy for Box<T> {
    fn deep_copy(&self) -> Self {
        Box::new((**self).deep_copy())
    }

    fn deep_copy_into(&self, out: &mut Self) {
        (**self).deep_copy_into(out);
    }
}

impl<T: DeepCopy> DeepCopy for Arc<T> {
    fn deep_copy(&self) -> Self {
        Arc::new((**self).deep_copy())
    }

    fn deep_copy_into(&self, out: &mut Self) {
        match Arc::get_mut(out) {
            Some(dst) => (**self).deep_copy_into(dst),
            None => *out = self.deep_copy(),
        }
    }
}

impl<T: DeepCopy> DeepCopy for Rc<T> {
    fn deep_copy(&self) -> Self {
        Rc::new((**self).deep_copy())
    }

    fn deep_copy_into(&self, out: &mut Self) {
        match Rc::get_mut(out) {
            Some(dst) => (**self).deep_copy_into(dst),
            None => *out = self.deep_copy(),
        }
    }
}

macro_rules! tuple_impls {
    ($(($($name:ident $idx:tt),+))*) => {
        $(
            impl<$($name: DeepCopy),+> DeepCopy for ($($name,)+) {
                fn deep_copy(&self) -> Self {
                    ($(self.$idx.deep_copy(),)+)
                }
                fn deep_copy_into(&self, out: &mut Self) {
                    $(self.$idx.deep_copy_into(&mut out.$idx);)+
                }
            }
        )*
    };
}

tuple_impls! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
}

impl DeepCopy for serde_json::Value {
    fn deep_copy(&self) -> Self {
        self.clone()
    }

    fn deep_copy_into(&self, out: &mut Self) {
        out.clone_from(self);
    }
}

mod meta;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    #[test]
    fn vec_deep_copy_into_reuses_capacity_and_matches_source() {
        let src = vec!["a".to_string(), "bb".to_string()];
        let mut dst: Vec<String> = Vec::with_capacity(64);
        dst.push(String::with_capacity(32));
        dst.push("old".into());
        dst.push("extra".into());
        let (cap, first_cap) = (dst.capacity(), dst[0].capacity());
        src.deep_copy_into(&mut dst);
        assert_eq!(dst, src);
        assert_eq!(dst.capacity(), cap);
        assert_eq!(dst[0].capacity(), first_cap);
    }

    #[test]
    fn btreemap_deep_copy_into_drops_stale_keys_and_updates_in_place() {
        let src: BTreeMap<String, String> = [("a".into(), "1".into()), ("b".into(), "2".into())]
            .into_iter()
            .collect();
        let mut dst: BTreeMap<String, String> = [
            ("a".into(), String::with_capacity(40)),
            ("z".into(), "gone".into()),
        ]
        .into_iter()
        .collect();
        src.deep_copy_into(&mut dst);
        assert_eq!(dst, src);
        assert!(dst["a"].capacity() >= 40);
    }

    #[test]
    fn hashmap_deep_copy_into_matches_source() {
        let src: HashMap<String, Vec<u8>> = [("k".into(), vec![1, 2])].into_iter().collect();
        let mut dst: HashMap<String, Vec<u8>> = [("x".into(), vec![9])].into_iter().collect();
        src.deep_copy_into(&mut dst);
        assert_eq!(dst, src);
        assert_eq!(src.deep_copy(), src);
    }

    #[test]
    fn option_deep_copy_into_handles_every_combination() {
        let mut dst = Some(String::from("x"));
        None::<String>.deep_copy_into(&mut dst);
        assert_eq!(dst, None);
        Some(String::from("y")).deep_copy_into(&mut dst);
        assert_eq!(dst.as_deref(), Some("y"));
    }

    #[test]
    fn arc_deep_copy_is_a_new_allocation() {
        let src = Arc::new(vec![1u32, 2, 3]);
        let copy = src.deep_copy();
        assert_eq!(copy, src);
        assert!(!Arc::ptr_eq(&copy, &src));
        let mut shared = Arc::clone(&src);
        let other = Arc::new(vec![7u32]);
        other.deep_copy_into(&mut shared);
        assert_eq!(*src, vec![1, 2, 3], "the shared original must be untouched");
        assert_eq!(*shared, vec![7]);
    }

    #[test]
    fn object_meta_deep_copy_into_copies_every_field_and_reuses_strings() {
        let src = ObjectMeta {
            name: Some("foo".into()),
            namespace: Some("ns".into()),
            labels: Some([("app".to_string(), "x".to_string())].into_iter().collect()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: "p".into(),
                uid: "u".into(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            resource_version: Some("42".into()),
            generation: Some(3),
            ..ObjectMeta::default()
        };
        let mut dst = ObjectMeta {
            name: Some(String::with_capacity(100)),
            uid: Some("stale".into()),
            ..ObjectMeta::default()
        };
        src.deep_copy_into(&mut dst);
        assert_eq!(dst, src);
        assert!(dst.name.as_ref().map(String::capacity).unwrap_or(0) >= 100);
        assert_eq!(src.deep_copy(), src);
    }

    proptest::proptest! {
        #[test]
        fn deep_copy_into_always_matches_deep_copy(
            src in proptest::collection::vec(proptest::option::of("[a-z]{0,8}"), 0..12),
            dst in proptest::collection::vec(proptest::option::of("[a-z]{0,8}"), 0..12),
            map_src in proptest::collection::btree_map("[a-c]{1,2}", proptest::collection::vec(0u8..5, 0..4), 0..6),
            map_dst in proptest::collection::btree_map("[a-c]{1,2}", proptest::collection::vec(0u8..5, 0..4), 0..6),
        ) {
            let mut dst = dst;
            src.deep_copy_into(&mut dst);
            proptest::prop_assert_eq!(&dst, &src);
            proptest::prop_assert_eq!(src.deep_copy(), src);
            let mut map_dst = map_dst;
            map_src.deep_copy_into(&mut map_dst);
            proptest::prop_assert_eq!(&map_dst, &map_src);
        }
    }

    #[test]
    fn tuples_and_arrays_copy_elementwise() {
        let src = ((1u8, "a".to_string()), [Some(1i32), None]);
        let mut dst = ((0u8, String::new()), [None, Some(5)]);
        src.deep_copy_into(&mut dst);
        assert_eq!(dst, src);
    }
}
