//! Fields whose optionality depends on the Kubernetes version k8s-openapi is built for.
//!
//! This crate enables no k8s-openapi version feature (its user picks one), and the
//! generated types differ between versions: `Deployment.spec` and `ReplicaSet.spec` are
//! `Option`s up to 1.36 and plain structs in 1.37; the `status` and `type` of
//! `DeploymentCondition` and `ReplicaSetCondition` are `String`s up to 1.36 and
//! `Option<String>`s in 1.37; an EndpointSlice's `endpoints` is a `Vec` up to 1.36 and an
//! `Option<Vec>` in 1.37; `DaemonSet.spec` and `StatefulSet.spec` are `Option`s up to 1.36
//! and plain in 1.37; a `ControllerRevision`'s `data` is an `Option` up to 1.36 and plain in
//! 1.37, its `revision` plain up to 1.36 and an `Option` in 1.37; `CronJob.spec` is an
//! `Option` up to 1.35. [`Opt`] reads and writes such a field the same way whichever it
//! is; struct literals set them with [`field`]. Every controller of this folder goes through
//! it for those fields.

use k8s_openapi::{
    api::{
        apps::v1::{DaemonSetSpec, DeploymentSpec, ReplicaSetSpec, StatefulSetSpec},
        batch::v1::CronJobSpec,
        discovery::v1::Endpoint,
    },
    apimachinery::pkg::runtime::RawExtension,
};

/// A field that is either a `T` or an `Option<T>`.
pub(crate) trait Opt<T> {
    /// The value, if present.
    fn opt(&self) -> Option<&T>;
    /// The value, set to its default first if absent.
    fn opt_mut(&mut self) -> &mut T;
}

impl<T: Default> Opt<T> for Option<T> {
    fn opt(&self) -> Option<&T> {
        self.as_ref()
    }

    fn opt_mut(&mut self) -> &mut T {
        self.get_or_insert_with(T::default)
    }
}

/// `Opt` for a type that is sometimes a plain field: always present.
macro_rules! always_present {
    ($($ty:ty),*) => {$(
        impl Opt<$ty> for $ty {
            fn opt(&self) -> Option<&$ty> {
                Some(self)
            }

            fn opt_mut(&mut self) -> &mut $ty {
                self
            }
        }
    )*};
}

always_present!(
    CronJobSpec,
    DaemonSetSpec,
    DeploymentSpec,
    ReplicaSetSpec,
    StatefulSetSpec,
    RawExtension,
    String,
    Vec<Endpoint>,
    i64
);

/// A value for a field of either form: `T` converts into `T` and into `Option<T>`.
pub(crate) fn field<T, F: From<T>>(value: T) -> F {
    F::from(value)
}

/// The text of a `String` / `Option<String>` field ("" when absent).
pub(crate) fn text(field: &impl Opt<String>) -> &str {
    field.opt().map_or("", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_optional_fields_read_and_write_alike() {
        let mut plain = String::from("a");
        let mut optional: Option<String> = None;
        assert_eq!(text(&plain), "a");
        assert_eq!(text(&optional), "");
        optional.opt_mut().push('b');
        plain.opt_mut().push('b');
        assert_eq!(text(&optional), "b");
        assert_eq!(text(&plain), "ab");
    }
}
