//! `create`: a new object in a collection (kube-apiserver's `handlers/create.go`).

use super::{
    super::{
        context::RequestContext,
        decode, options,
        reply::{self, Reply},
        scope::Scope,
    },
    admit, escalation_guard,
};
use crate::errors::ApiResult;

/// Decodes the body, admits it, creates it and encodes the stored object (201).
pub(crate) async fn create(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    if scope.target.subresource.is_some() {
        return create_subresource(scope, cx);
    }
    if scope.target.name.is_some() {
        return Err(Scope::method_not_allowed());
    }
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "CreateOptions",
        &cx.parts.headers,
        false,
    )?;
    cx.trail.enter("decode")?;
    let mut value = decode::object(&cx.parts.headers, &cx.body, scope.rt.builtin, &mut opts)?;
    admit(scope, cx, opts.dry_run, Some(&mut value))?;
    opts.guard = escalation_guard(scope, cx, Some(&value))?;
    cx.trail.enter("registry")?;
    if let Some(reviewed) = crate::reviews::answer(scope, cx, &value) {
        cx.trail.enter("encode")?;
        return scope.encode(201, &reviewed?);
    }
    let obj = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::create(scope, cx, &scope.target, value, &opts).await?
    } else {
        scope.engine().create(&scope.target, value, &opts)?
    };
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(201, &obj)?,
        &opts.fields.warnings,
    ))
}

/// A POST to a subresource: a pod's `binding`, answered with a `Status` of `Success`
/// (201), as kube-apiserver's `BindingREST` answers; a ServiceAccount's `token`, answered
/// with the TokenRequest and its token (201).
fn create_subresource(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "CreateOptions",
        &cx.parts.headers,
        false,
    )?;
    cx.trail.enter("decode")?;
    let value = decode::object(&cx.parts.headers, &cx.body, true, &mut opts)?;
    admit(scope, cx, opts.dry_run, None)?;
    cx.trail.enter("registry")?;
    if let Some(sub) = &scope.target.subresource
        && crate::authn::token_request::is_token_request(&scope.rt.group, &scope.rt.plural, sub)
    {
        // A ServiceAccount's `token`: a TokenRequest answered, nothing stored (token.go).
        let answered = crate::authn::token_request::answer(
            scope.shared.auth.authenticator.service_accounts()?,
            scope.engine(),
            scope.target.namespace.as_deref().unwrap_or_default(),
            scope.target.name.as_deref().unwrap_or_default(),
            &value,
        )?;
        cx.trail.enter("encode")?;
        return Ok(reply::json(201, &answered));
    }
    scope
        .engine()
        .create_subresource(&scope.target, &value, &opts)?;
    cx.trail.enter("encode")?;
    Ok(reply::json(
        201,
        &serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn creates_once_and_refuses_a_name_in_the_path() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let (code, body) = send(&server, "POST", cms, Some(cm.clone())).await;
        assert_eq!((code, body["metadata"]["name"].as_str()), (201, Some("a")));
        assert_eq!(send(&server, "POST", cms, Some(cm.clone())).await.0, 409);
        assert_eq!(
            send(&server, "POST", &format!("{cms}/a"), Some(cm)).await.0,
            405
        );
        let (code, _) = send(
            &server,
            "POST",
            &format!("{cms}?dryRun=All"),
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}})),
        )
        .await;
        assert_eq!(code, 201);
        assert_eq!(
            send(&server, "GET", &format!("{cms}/dry"), None).await.0,
            404
        );
    }
}
