from memory_app.permissions import can_administer
from review_app.navigation import pages_for


def navigation(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_pages": [], "may_administer": False}
    return {"nav_pages": pages_for(user), "may_administer": can_administer(user)}
