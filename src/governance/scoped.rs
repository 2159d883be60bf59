//! A view of one warehouse over any [`Spec`] (the in-process
//! catalog, or `GrpcNamespace` over the wire): every request carries the
//! warehouse in its context, so top-level namespaces are created through
//! that warehouse's door and the root lists that warehouse alone. Over
//! REST the same view is the URL prefix `/warehouses/{warehouse}`.

use std::sync::Arc;

use crate::api::spec::{lance_edge, lance_edge_rows, Spec};
use crate::error::CatalogResult;
use bytes::Bytes;
use lance_namespace::models;

use crate::core::reserved;

/// `inner`, scoped to one warehouse.
#[derive(Debug)]
pub struct Scoped {
    inner: Arc<dyn Spec>,
    warehouse: String,
}

impl Scoped {
    pub fn new(inner: Arc<dyn Spec>, warehouse: impl Into<String>) -> Self {
        Self {
            inner,
            warehouse: warehouse.into(),
        }
    }

    fn scope(&self, context: &mut Option<std::collections::HashMap<String, String>>) {
        context
            .get_or_insert_with(Default::default)
            .insert(reserved::WAREHOUSE.to_string(), self.warehouse.clone());
    }
}

macro_rules! scoped {
    (@acc [$($done:tt)*]) => {
        #[async_trait::async_trait]
        impl Spec for Scoped {
            fn namespace_id(&self) -> String {
                format!("{} (warehouse {:?})", self.inner.namespace_id(), self.warehouse)
            }
            $($done)*
        }
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        scoped!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                self.scope(&mut request.context);
                self.inner.$method(request, data).await
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        scoped!(@plain [$($done)*] $method $Req (); $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        scoped!(@plain [$($done)*] $method $Req Bytes; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        scoped!(@plain [$($done)*] $method $Req i64; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        scoped!(@plain [$($done)*] $method $Req String; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        scoped!(@plain [$($done)*] $method $Req models::$Resp; $($row)*);
    };
    (@plain [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        scoped!(@acc [$($done)*
            async fn $method(&self, mut request: models::$Req) -> CatalogResult<$Ret> {
                self.scope(&mut request.context);
                self.inner.$method(request).await
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        scoped!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(scoped);
lance_edge!(Scoped);
