//! Maintenance reports of a table: what they find, never acting on it.
//! Routed and authorized as the table's own metadata reads.

use super::prelude::*;

impl Plane<'_> {
    pub(super) async fn get_table_index_health(
        &self,
        request: GetIndexHealthRequest,
    ) -> CatalogResult<IndexHealth> {
        if request.id.is_empty() {
            return Err(CatalogError::invalid("a table id must not be empty"));
        }
        let action = op::GetTableIndexHealth.action;
        let (route, _) = self.object_route(self.call, action, &request.id).await?;
        route.catalog.index_health(&request.id).await
    }
}
