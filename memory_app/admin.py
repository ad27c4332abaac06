"""Raw data for superusers. History is read-only here as everywhere."""

import re

from django import forms
from django.contrib import admin

from memory_app import models
from memory_app.paths import STORE_SLUG_REGEX
from memory_app.services.stores import store_for_system


class ReadOnlyAdmin(admin.ModelAdmin):
    """For append-only rows: visible, never changed or deleted from the admin."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.Principal)
class PrincipalAdmin(admin.ModelAdmin):
    list_display = ["user", "is_service_account", "created_at"]
    list_filter = ["is_service_account"]
    search_fields = ["user__username"]


@admin.register(models.GroupMemoryPolicy)
class GroupMemoryPolicyAdmin(admin.ModelAdmin):
    list_display = ["group", "can_read_memory", "can_manage_memory", "updated_at"]


@admin.register(models.ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["user__username", "prefix", "name"]
    readonly_fields = ["user", "prefix", "key_sha256", "created_at", "last_used_at"]

    def has_add_permission(self, request):
        # Keys are issued by `manage.py memory_user`, which shows the raw key once.
        return False


class SystemGrantInline(admin.TabularInline):
    model = models.SystemGrant
    extra = 0


class SystemForm(forms.ModelForm):
    class Meta:
        model = models.System
        fields = ["slug", "name", "description"]

    def clean_slug(self) -> str:
        # Its store's slug is `system-<slug>`, held to STORE_SLUG_REGEX by the
        # database: refused here rather than as an IntegrityError on save.
        slug = self.cleaned_data["slug"]
        if not re.match(STORE_SLUG_REGEX, slug):
            raise forms.ValidationError(
                "Lowercase letters, digits, '-' and '_', starting with a letter or digit."
            )
        return slug


@admin.register(models.System)
class SystemAdmin(admin.ModelAdmin):
    form = SystemForm
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [SystemGrantInline]

    def save_model(self, request, obj, form, change):
        """A system has its store from the start, as one made by a grant
        (principals.system_grant_set): its card is there to open."""
        super().save_model(request, obj, form, change)
        store_for_system(system=obj)


@admin.register(models.Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["external_id", "created_by", "created_at"]
    search_fields = ["external_id"]
    raw_id_fields = ["participants", "created_by"]


@admin.register(models.MemoryStore)
class MemoryStoreAdmin(admin.ModelAdmin):
    list_display = ["slug", "scope", "name", "owner", "system", "created_at"]
    list_filter = ["scope"]
    search_fields = ["slug", "name"]
    raw_id_fields = ["owner", "system", "conversation"]


@admin.register(models.MemoryDocument)
class MemoryDocumentAdmin(ReadOnlyAdmin):
    """Read-only: document changes must go through the services, which
    write the version history, scan content and emit events."""

    list_display = ["path", "store", "title", "doc_type", "trust", "state", "version"]
    list_filter = ["state", "trust", "doc_type", "store__scope"]
    search_fields = ["path", "title"]
    list_select_related = ["store"]
    exclude = ["embedding", "search_vector"]


class SourceRefInline(admin.TabularInline):
    model = models.MemorySourceRef
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.MemoryVersion)
class MemoryVersionAdmin(ReadOnlyAdmin):
    list_display = ["document", "version", "change", "author_name", "created_at"]
    list_filter = ["change"]
    search_fields = ["document__path", "sha256"]
    list_select_related = ["document"]
    inlines = [SourceRefInline]


@admin.register(models.MemorySourceRef)
class MemorySourceRefAdmin(ReadOnlyAdmin):
    list_display = ["kind", "ref", "version"]
    list_filter = ["kind"]


@admin.register(models.ContextTrace)
class ContextTraceAdmin(ReadOnlyAdmin):
    list_display = ["id", "principal", "run_id", "tokens", "token_budget", "created_at"]
    search_fields = ["run_id", "context_sha256"]


@admin.register(models.MemoryUsage)
class MemoryUsageAdmin(ReadOnlyAdmin):
    list_display = ["run_id", "document", "block", "rank", "score", "tokens", "hit", "created_at"]
    list_filter = ["block", "hit"]
    list_select_related = ["document"]


class ReviewItemInline(admin.TabularInline):
    model = models.DreamReviewItem
    extra = 0
    fields = ["action", "status", "target_store", "target_path", "decided_by", "decided_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(models.DreamJob)
class DreamJobAdmin(ReadOnlyAdmin):
    list_display = ["kind", "status", "progress_done", "progress_total", "created_at"]
    list_filter = ["kind", "status"]
    inlines = [ReviewItemInline]


@admin.register(models.DreamReviewItem)
class DreamReviewItemAdmin(ReadOnlyAdmin):
    list_display = ["action", "status", "target_store", "target_path", "created_at"]
    list_filter = ["action", "status"]


@admin.register(models.MemoryEvent)
class MemoryEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "type", "principal", "created_at"]
    list_filter = ["type"]
