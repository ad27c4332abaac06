from memory_app.permissions import can_administer
from review_app.navigation import PAGES


def navigation(request):
    return {"nav_pages": PAGES, "may_administer": can_administer(request.user)}
