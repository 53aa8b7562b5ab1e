"""User feedback on the dashboard: a project's Feedback page and its read-API twin,
newest first, each linked to the error group of the event it names
(storage/queries/feedback.py). The group page shows its own (dashboard/views.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dashboard.api import ApiHandler
from dashboard.base import DashboardHandler
from storage.queries import feedback as fbq
from storage.store import Store

PAGE = 50


@dataclass(frozen=True)
class FeedbackView:
    items: list[fbq.Feedback]
    total: int
    limit: int
    offset: int


def feedback_view(store: Store, project_id: int, limit: int, offset: int) -> FeedbackView:
    items, total = fbq.list_feedback(store, project_id, limit, offset)
    return FeedbackView(items, total, limit, offset)


class FeedbackPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        page = self.int_arg("page", 1, 1, 10_000) or 1
        view = await self.run(feedback_view, self.store, project.id, PAGE, (page - 1) * PAGE)
        self.render("feedback.html", view=view, page=page, section="feedback")


class FeedbackApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(feedback_view, self.store, project.id,
                              self.int_arg("limit", PAGE, 1, fbq.MAX_PAGE) or PAGE,
                              self.int_arg("offset", 0, 0, 1_000_000) or 0)
        self.write_json(asdict(view))
