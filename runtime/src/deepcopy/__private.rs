//! Per-field dispatch for generated `DeepCopy` impls. Not public API: only generated code
//! (`kubegen-codegen`, `#[derive(kubegen::Resource)]`, `#[derive(DeepCopy)]`) names it.
//!
//! A derive sees one type at a time, so it cannot tell whether a field's type has a
//! [`DeepCopy`] impl (a type of the same tree, `String`, `Vec<Local>`, `ObjectMeta`) or
//! only `Clone` (every other k8s-openapi type, `Quantity`, `Time`, `ByteString`, types of
//! other crates such as chrono or url). Generated code asks the compiler instead, per
//! field, with autoref-based specialization: it calls `Field(&self.x).copy_field()`.
//! Method lookup tries the receiver type `Field<T>` before `&Field<T>`, so
//!
//! * the impl for `Field<T>` (needs `T: DeepCopy`) wins when it applies: `deep_copy`,
//!   and `deep_copy_into` reusing the target's allocations;
//! * otherwise the impl for `&Field<T>` (needs `T: Clone`) is picked: `clone`, and
//!   `clone_from` (which reuses `String` and `Vec` buffers).
//!
//! Field types are concrete in generated code, so the choice is made at compile time and
//! both calls inline to what a hand-written impl would do. deepcopy-gen does the same in
//! Go: it calls `DeepCopyInto` where a type has one and assigns otherwise.
//!
//! A field of a type parameter `T` is bounded by `T: DeepCopy` in the generated impl and
//! goes through `DeepCopy`. A field type with neither impl is a compile error at the
//! generated call, naming both missing bounds.

use super::DeepCopy;

/// A borrowed field of a value whose `DeepCopy` impl is generated.
#[derive(Debug)]
pub struct Field<'a, T>(pub &'a T);

/// Copies a [`Field`], through `DeepCopy` when the field type has it, else through
/// `Clone` (see the module documentation).
#[diagnostic::on_unimplemented(
    message = "the field type `{T}` implements neither `DeepCopy` nor `Clone`",
    note = "derive `Clone` (or `kubegen::deepcopy::DeepCopy`) for it"
)]
pub trait CopyField<T> {
    /// An independent copy of the field.
    fn copy_field(self) -> T;
    /// Overwrites `out` with a copy of the field, reusing `out`'s allocations.
    fn copy_field_into(self, out: &mut T);
}

impl<T: DeepCopy> CopyField<T> for Field<'_, T> {
    #[inline]
    fn copy_field(self) -> T {
        self.0.deep_copy()
    }

    #[inline]
    fn copy_field_into(self, out: &mut T) {
        self.0.deep_copy_into(out);
    }
}

impl<T: Clone> CopyField<T> for &Field<'_, T> {
    #[inline]
    fn copy_field(self) -> T {
        self.0.clone()
    }

    #[inline]
    fn copy_field_into(self, out: &mut T) {
        out.clone_from(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::{CopyField, Field};
    use crate::deepcopy::DeepCopy;

    /// Has both impls; they disagree on purpose, to show which one is picked.
    #[derive(Debug, PartialEq)]
    struct Both(&'static str);

    impl Clone for Both {
        fn clone(&self) -> Self {
            Both("clone")
        }
    }

    impl DeepCopy for Both {
        fn deep_copy(&self) -> Self {
            Both("deep_copy")
        }
    }

    #[derive(Clone, Debug, PartialEq)]
    struct CloneOnly(String);

    #[test]
    fn deep_copy_wins_over_clone_and_clone_is_the_fallback() {
        assert_eq!(Field(&Both("x")).copy_field(), Both("deep_copy"));
        assert_eq!(
            Field(&vec![Both("x")]).copy_field(),
            vec![Both("deep_copy")],
            "Vec<T: DeepCopy> is DeepCopy"
        );
        let src = CloneOnly("abc".into());
        assert_eq!(Field(&src).copy_field(), src);
        let nested = Some(vec![CloneOnly("a".into())]);
        assert_eq!(
            Field(&nested).copy_field(),
            nested,
            "a container of Clone-only types is cloned whole"
        );
    }

    #[test]
    fn both_paths_reuse_the_targets_allocations() {
        let mut s = String::with_capacity(64);
        let ptr = s.as_ptr();
        Field(&"xyz".to_string()).copy_field_into(&mut s);
        assert_eq!((s.as_str(), s.as_ptr()), ("xyz", ptr), "DeepCopy path");
        let mut v: Vec<CloneOnly> = Vec::with_capacity(16);
        let ptr = v.as_ptr();
        Field(&vec![CloneOnly("a".into())]).copy_field_into(&mut v);
        assert_eq!(v, vec![CloneOnly("a".into())]);
        assert_eq!(
            v.as_ptr(),
            ptr,
            "Clone path: Vec::clone_from keeps the buffer"
        );
    }
}
