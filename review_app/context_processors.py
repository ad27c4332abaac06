from review_app.navigation import PAGES


def navigation(request):
    return {"nav_pages": PAGES}
