//! The spec operations as the catalog's own trait, [`Spec`]: the methods of
//! `LanceNamespace`, answering [`CatalogResult`], so the core and the
//! governance layer keep one error type, with its code and its log-only
//! cause, to the end. [`lance_edge!`] writes a type's `LanceNamespace` impl
//! over its `Spec` impl: the one place a catalog error becomes a
//! `lance::Error` (which carries it whole; `CatalogError::from_lance` takes
//! it back out unchanged). Generated from the inventory, like every other
//! per-operation surface.

use bytes::Bytes;
use lance_namespace::models;

use crate::error::CatalogResult;

macro_rules! spec_trait {
    (@acc [$($done:tt)*]) => {
        /// Every spec operation, answering the catalog's error.
        #[async_trait::async_trait]
        pub trait Spec: Send + Sync + std::fmt::Debug {
            /// How the `LanceNamespace` edge names this namespace.
            fn namespace_id(&self) -> String;
            $($done)*
        }
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        spec_trait!(@acc [$($done)*
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp>;
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        spec_trait!(@plain [$($done)*] $method $Req (); $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        spec_trait!(@plain [$($done)*] $method $Req Bytes; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        spec_trait!(@plain [$($done)*] $method $Req i64; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        spec_trait!(@plain [$($done)*] $method $Req String; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        spec_trait!(@plain [$($done)*] $method $Req models::$Resp; $($row)*);
    };
    (@plain [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        spec_trait!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<$Ret>;
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        spec_trait!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(spec_trait);

/// `lance_edge!(Type)`: `impl LanceNamespace for Type` over its `Spec` impl,
/// each method the `Spec` one with its error converted (once, here).
macro_rules! lance_edge {
    ($T:ty) => {
        $crate::api::inventory::for_each_spec_op!(lance_edge_rows[$T]);
    };
}
pub(crate) use lance_edge;

macro_rules! lance_edge_rows {
    (@acc $T:ty; [$($done:tt)*]) => {
        #[async_trait::async_trait]
        impl lance_namespace::LanceNamespace for $T {
            fn namespace_id(&self) -> String {
                $crate::api::spec::Spec::namespace_id(self)
            }
            $($done)*
        }
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        lance_edge_rows!(@acc $T; [$($done)*
            async fn $method(&self, request: lance_namespace::models::$Req, data: bytes::Bytes) -> lance::Result<lance_namespace::models::$Resp> {
                $crate::api::spec::Spec::$method(self, request, data).await.map_err($crate::error::CatalogError::into_lance)
            }
        ] $($rest)*);
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        lance_edge_rows!(@plain $T; [$($done)*] $method $Req (); $($row)*);
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        lance_edge_rows!(@plain $T; [$($done)*] $method $Req bytes::Bytes; $($row)*);
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        lance_edge_rows!(@plain $T; [$($done)*] $method $Req i64; $($row)*);
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        lance_edge_rows!(@plain $T; [$($done)*] $method $Req String; $($row)*);
    };
    (@acc $T:ty; [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        lance_edge_rows!(@plain $T; [$($done)*] $method $Req lance_namespace::models::$Resp; $($row)*);
    };
    (@plain $T:ty; [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        lance_edge_rows!(@acc $T; [$($done)*
            async fn $method(&self, request: lance_namespace::models::$Req) -> lance::Result<$Ret> {
                $crate::api::spec::Spec::$method(self, request).await.map_err($crate::error::CatalogError::into_lance)
            }
        ] $($rest)*);
    };
    ([$T:ty] $($rows:tt)*) => {
        lance_edge_rows!(@acc $T; [] $($rows)*);
    };
}
pub(crate) use lance_edge_rows;

/// Any other `LanceNamespace` (Lance's own `DirectoryNamespace`, a client
/// of another catalog) as a [`Spec`], for the REST gateway over it: its
/// errors are classified here, once, as they come in.
#[derive(Debug, Clone)]
pub struct FromLance(pub std::sync::Arc<dyn lance_namespace::LanceNamespace>);

macro_rules! from_lance_rows {
    (@acc [$($done:tt)*]) => {
        #[async_trait::async_trait]
        impl Spec for FromLance {
            fn namespace_id(&self) -> String {
                self.0.namespace_id()
            }
            $($done)*
        }
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident,
        $verb:ident $path:literal, body arrow, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        from_lance_rows!(@acc [$($done)*
            async fn $method(&self, request: models::$Req, data: Bytes) -> CatalogResult<models::$Resp> {
                Ok(self.0.$method(request, data).await?)
            }
        ] $($rest)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) unit $($row:tt)*) => {
        from_lance_rows!(@plain [$($done)*] $method $Req (); $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) bytes[$field:literal] $($row:tt)*) => {
        from_lance_rows!(@plain [$($done)*] $method $Req Bytes; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) count[$field:literal] $($row:tt)*) => {
        from_lance_rows!(@plain [$($done)*] $method $Req i64; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) text[$field:literal] $($row:tt)*) => {
        from_lance_rows!(@plain [$($done)*] $method $Req String; $($row)*);
    };
    (@acc [$($done:tt)*] $Name:ident => $method:ident ($Req:ident -> $Resp:ident) $answer:ident $($row:tt)*) => {
        from_lance_rows!(@plain [$($done)*] $method $Req models::$Resp; $($row)*);
    };
    (@plain [$($done:tt)*] $method:ident $Req:ident $Ret:ty;
        , $verb:ident $path:literal, body $body:ident, $status:literal, query [$($q:ident : $kind:ident),*], facts [$($fact:ident)*]; $($rest:tt)*) => {
        from_lance_rows!(@acc [$($done)*
            async fn $method(&self, request: models::$Req) -> CatalogResult<$Ret> {
                Ok(self.0.$method(request).await?)
            }
        ] $($rest)*);
    };
    ($($rows:tt)*) => {
        from_lance_rows!(@acc [] $($rows)*);
    };
}

crate::api::inventory::for_each_spec_op!(from_lance_rows);
