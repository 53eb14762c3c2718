//! Custom verbs on a [`ResourceClient`]: what generated `+genclient:method=` extension
//! methods call (client-gen's `GetScale`, `UpdateScale`, `Bind`, ...).
//!
//! Each verb takes an optional subresource and decodes the answer as a caller-chosen
//! type `R`; verbs with a body send a caller-chosen input type `I` as it serializes
//! (no `apiVersion`/`kind` is added: an input such as `autoscaling/v1 Scale` carries
//! its own).

use kube_core::params::{GetParams, ListParams, Patch, PatchParams, PostParams};
use serde::{Serialize, de::DeserializeOwned};

use super::{error::Error, resource::ResourceClient};
use crate::Object;

fn body<I: Serialize>(input: &I) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(input).map_err(Error::Encode)
}

impl<K: Object> ResourceClient<K> {
    /// GET `name` (or its `subresource`), decoded as `R`.
    pub async fn get_as<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
    ) -> Result<R, Error> {
        let request = self.raw().request.clone();
        let req = match subresource {
            Some(sub) => request.get_subresource(sub, name)?,
            None => request.get(name, &GetParams::default())?,
        };
        self.client().request(req).await
    }

    /// GET the collection, decoded as `R` (a list type).
    pub async fn list_as<R: DeserializeOwned>(&self, lp: &ListParams) -> Result<R, Error> {
        let req = self.raw().request.list(lp)?;
        self.client().request(req).await
    }

    /// POST `input` to the collection, or to `name`'s `subresource` (e.g. `eviction`,
    /// `binding`), decoded as `R`.
    pub async fn create_as<I: Serialize, R: DeserializeOwned>(
        &self,
        target: Option<(&str, &str)>,
        pp: &PostParams,
        input: &I,
    ) -> Result<R, Error> {
        let request = &self.raw().request;
        let req = match target {
            Some((name, sub)) => request.create_subresource(sub, name, pp, body(input)?)?,
            None => request.create(pp, body(input)?)?,
        };
        self.client().request(req).await
    }

    /// PUT `input` to `name` (or its `subresource`), decoded as `R`.
    pub async fn update_as<I: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        pp: &PostParams,
        input: &I,
    ) -> Result<R, Error> {
        let request = &self.raw().request;
        let req = match subresource {
            Some(sub) => request.replace_subresource(sub, name, pp, body(input)?)?,
            None => request.replace(name, pp, body(input)?)?,
        };
        self.client().request(req).await
    }

    /// PATCH `name` (or its `subresource`), decoded as `R`.
    pub async fn patch_as<P: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, Error> {
        let request = &self.raw().request;
        let req = match subresource {
            Some(sub) => request.patch_subresource(sub, name, pp, patch)?,
            None => request.patch(name, pp, patch)?,
        };
        self.client().request(req).await
    }

    /// Server-side apply of `input` to `name` (or its `subresource`) as `field_manager`,
    /// decoded as `R`.
    pub async fn apply_as<I: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        input: &I,
        field_manager: &str,
        force: bool,
    ) -> Result<R, Error> {
        let pp = super::resource::apply_params(field_manager, force);
        self.patch_as(name, subresource, &pp, &Patch::Apply(input))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::body;

    #[test]
    fn inputs_are_sent_as_they_serialize_without_type_meta() {
        let input = serde_json::json!({"spec": {"replicas": 3}});
        let sent: serde_json::Value = serde_json::from_slice(&body(&input).unwrap()).unwrap();
        assert_eq!(sent, input);
        assert!(sent.get("apiVersion").is_none());
    }
}
