//! The test server's own stage, after kube-apiserver's filters: the configured response
//! delay, then the [`crate::FailRule`]s, which match resource requests by verb and
//! resource (a path nothing serves is answered by the endpoint, not failed here).

use crate::{
    endpoints::{context::RequestContext, request_info::Route},
    errors::ApiResult,
    shared::Shared,
};

/// Waits out the delay, then fails the request if a rule matches it.
pub(crate) async fn inject(shared: &Shared, cx: &RequestContext) -> ApiResult<()> {
    if let Some(delay) = shared.faults.delay() {
        tokio::time::sleep(delay).await;
    }
    if let Some(Ok(Route::Resource(info))) = &cx.route
        && let Some(err) = shared.faults.check(info.verb, &info.resource)
    {
        return Err(err);
    }
    Ok(())
}
