//! [`ApplyConfiguration`]: what a resource's root configuration tells the client.

/// A resource's root apply configuration (`DeploymentApplyConfiguration`): the request an
/// apply sends. Generated for every resource type, with its `apiVersion` and `kind` set by
/// the constructor.
pub trait ApplyConfiguration: serde::Serialize {
    /// The object the server answers with.
    type Object;

    /// `metadata.name`: required, it is part of the request path.
    fn name(&self) -> Option<&str>;

    /// `metadata.namespace`, when set.
    fn namespace(&self) -> Option<&str>;
}

/// A whole object sent as an apply configuration: every field it serializes is claimed
/// by the field manager, including defaults (`replicas: 0`, `false`, empty lists) it never
/// meant to own — what apply configurations exist to avoid. For objects a manager fully
/// owns, or to show the difference.
#[derive(Debug, Clone, Copy)]
pub struct WholeObject<'a, K>(pub &'a K);

impl<K: serde::Serialize + kube_core::Resource> serde::Serialize for WholeObject<'_, K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<K: serde::Serialize + kube_core::Resource> ApplyConfiguration for WholeObject<'_, K> {
    type Object = K;

    fn name(&self) -> Option<&str> {
        self.0.meta().name.as_deref()
    }

    fn namespace(&self) -> Option<&str> {
        self.0.meta().namespace.as_deref()
    }
}
