//! Running an operator as its ServiceAccount, bound to its generated role
//! ([`TestServer::client_with_role`]): what `config/rbac/` deploys in a cluster
//! (kubebuilder's `role.yaml` plus `role_binding.yaml`), done in one call, so a test
//! proves the role is enough.

use serde_json::{Value, json};

use crate::{
    TestServer,
    engine::{Target, WriteOptions},
    server::ServerError,
};

impl TestServer {
    /// A client authenticated as the ServiceAccount `namespace`/`service_account` (created
    /// if missing), bound to every `ClusterRole` and `Role` in the YAML (or JSON) manifest
    /// `role_yaml` — an operator's generated `config/rbac/role.yaml`. The roles are created
    /// (or replaced) as the admin; a `ClusterRole` is bound by a `ClusterRoleBinding`
    /// named `<role>:<namespace>:<service account>`, a `Role` by a `RoleBinding` of that
    /// name in the role's namespace (`namespace` when it names none). With RBAC on
    /// ([`crate::TestServerBuilder::rbac`]) the client may do what the role allows and
    /// nothing else: a missing `+kubebuilder:rbac` marker is a 403 naming the verb and the
    /// resource, as in a cluster.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kubegen_testserver::ServerError> {
    /// use kubegen_testserver::TestServer;
    ///
    /// let server = TestServer::builder().rbac().start().await?;
    /// let operator = server
    ///     .client_with_role("default", "foo-operator", include_str!("../../examples/foo-operator/config/rbac/role.yaml"))
    ///     .await?;
    /// # let _ = operator; Ok(()) }
    /// ```
    pub async fn client_with_role(
        &self,
        namespace: &str,
        service_account: &str,
        role_yaml: &str,
    ) -> Result<kubegen::client::Client, ServerError> {
        let docs = crate::crd::parse_documents(role_yaml).map_err(ServerError::Manifest)?;
        let mut roles = Vec::new();
        for mut doc in docs {
            let kind = doc["kind"].as_str().unwrap_or_default().to_string();
            let name = doc["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let role_namespace = match kind.as_str() {
                "ClusterRole" => None,
                "Role" => Some(
                    doc["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or(namespace)
                        .to_string(),
                ),
                _ => continue,
            };
            if let Some(ns) = &role_namespace {
                doc["metadata"]["namespace"] = json!(ns);
            }
            let plural = if role_namespace.is_some() {
                "roles"
            } else {
                "clusterroles"
            };
            self.replace(plural, role_namespace.as_deref(), &name, doc)?;
            roles.push((kind, name, role_namespace));
        }
        if roles.is_empty() {
            return Err(ServerError::Manifest(
                "the manifest holds no ClusterRole or Role".into(),
            ));
        }
        for (kind, role, role_namespace) in roles {
            let name = format!("{role}:{namespace}:{service_account}");
            let (binding_kind, plural) = match role_namespace {
                None => ("ClusterRoleBinding", "clusterrolebindings"),
                Some(_) => ("RoleBinding", "rolebindings"),
            };
            let mut binding = json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": binding_kind,
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
            });
            if let Some(ns) = &role_namespace {
                binding["metadata"]["namespace"] = json!(ns);
            }
            self.replace(plural, role_namespace.as_deref(), &name, binding)?;
        }
        self.client_for_service_account(namespace, service_account)
            .await
    }

    /// Creates `object` (an rbac.authorization.k8s.io/v1 `plural`), or replaces the one
    /// of its name.
    fn replace(
        &self,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
        object: Value,
    ) -> Result<(), ServerError> {
        let engine = self.engine();
        let rt = crate::engine::resolve(engine, "rbac.authorization.k8s.io", "v1", plural)?;
        let mut target = Target {
            rt,
            namespace: namespace.map(str::to_string),
            name: None,
            subresource: None,
        };
        match engine.create(&target, object.clone(), &WriteOptions::default()) {
            Ok(_) => Ok(()),
            Err(err) if err.code == 409 => {
                target.name = Some(name.to_string());
                engine.update(&target, object, &WriteOptions::default())?;
                Ok(())
            }
            Err(err) => Err(err.into()),
        }
    }
}
