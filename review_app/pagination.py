"""The paginator of the review lists (`_pager.html` draws its pages)."""

from contextlib import suppress

from django.core.paginator import Page, Paginator


class Pager(Paginator):
    """Django's paginator, with a page number below 1 giving the first page.

    `get_page` answers every out-of-range number with the last page, so an
    edited or stale `?page=0` or `?page=-5` opened the end of the list. Past
    the end still gives the last page: the list may have shrunk since. Not a
    number at all is left to Django, which gives the first page.
    """

    def get_page(self, number) -> Page:
        with suppress(TypeError, ValueError):
            number = max(int(number), 1)
        return super().get_page(number)
