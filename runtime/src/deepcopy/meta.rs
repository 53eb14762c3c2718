//! `ObjectMeta` and `OwnerReference` field by field (their fields are the same in every
//! Kubernetes version k8s-openapi supports), so `deep_copy_into` reuses the target's
//! metadata allocations. Fields of other k8s-openapi types (`Time`,
//! `ManagedFieldsEntry`) go through the same per-field dispatch as generated code:
//! `DeepCopy` where it exists, `Clone` otherwise.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::__private::{CopyField as _, Field};
use super::DeepCopy;

impl DeepCopy for ObjectMeta {
    fn deep_copy(&self) -> Self {
        let mut out = ObjectMeta::default();
        self.deep_copy_into(&mut out);
        out
    }

    fn deep_copy_into(&self, out: &mut Self) {
        // Exhaustive destructuring: a field added upstream is a compile error here,
        // never a silently uncopied field.
        let ObjectMeta {
            annotations,
            creation_timestamp,
            deletion_grace_period_seconds,
            deletion_timestamp,
            finalizers,
            generate_name,
            generation,
            labels,
            managed_fields,
            name,
            namespace,
            owner_references,
            resource_version,
            self_link,
            uid,
        } = self;
        Field(annotations).copy_field_into(&mut out.annotations);
        Field(creation_timestamp).copy_field_into(&mut out.creation_timestamp);
        Field(deletion_grace_period_seconds)
            .copy_field_into(&mut out.deletion_grace_period_seconds);
        Field(deletion_timestamp).copy_field_into(&mut out.deletion_timestamp);
        Field(finalizers).copy_field_into(&mut out.finalizers);
        Field(generate_name).copy_field_into(&mut out.generate_name);
        Field(generation).copy_field_into(&mut out.generation);
        Field(labels).copy_field_into(&mut out.labels);
        Field(managed_fields).copy_field_into(&mut out.managed_fields);
        Field(name).copy_field_into(&mut out.name);
        Field(namespace).copy_field_into(&mut out.namespace);
        Field(owner_references).copy_field_into(&mut out.owner_references);
        Field(resource_version).copy_field_into(&mut out.resource_version);
        Field(self_link).copy_field_into(&mut out.self_link);
        Field(uid).copy_field_into(&mut out.uid);
    }
}

impl DeepCopy for OwnerReference {
    fn deep_copy(&self) -> Self {
        let mut out = OwnerReference::default();
        self.deep_copy_into(&mut out);
        out
    }

    fn deep_copy_into(&self, out: &mut Self) {
        let OwnerReference {
            api_version,
            block_owner_deletion,
            controller,
            kind,
            name,
            uid,
        } = self;
        api_version.deep_copy_into(&mut out.api_version);
        block_owner_deletion.deep_copy_into(&mut out.block_owner_deletion);
        controller.deep_copy_into(&mut out.controller);
        kind.deep_copy_into(&mut out.kind);
        name.deep_copy_into(&mut out.name);
        uid.deep_copy_into(&mut out.uid);
    }
}
