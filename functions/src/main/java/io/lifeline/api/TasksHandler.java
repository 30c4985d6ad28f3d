package io.lifeline.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Task;
import io.lifeline.agent.TaskStatus;
import io.lifeline.app.Tasks;
import io.lifeline.auth.Scope;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.support.Json;
import io.lifeline.support.Page;
import java.time.Clock;
import java.util.Set;

/** Tasks: create, list, and claim/complete, each of which moves the task and the agent together. */
public final class TasksHandler extends HttpApiHandler {
    static final int MAX_DESCRIPTION_CHARS = 2048;
    static final int MAX_RESULT_CHARS = 2048;

    private final Tasks tasks;
    private final Clock clock;

    public TasksHandler() {
        this(Wiring.fromEnvironment());
    }

    public TasksHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public TasksHandler(UseCases app) {
        this.tasks = app.tasks();
        this.clock = app.wiring().clock();
        route("POST /v1/teams/{team}/tasks", Scope.AGENT, this::create);
        route("GET /v1/teams/{team}/tasks", Scope.READ, this::list);
        route("POST /v1/teams/{team}/tasks/{taskId}/claim", Scope.AGENT, this::claim);
        route("POST /v1/teams/{team}/tasks/{taskId}/complete", Scope.AGENT, this::complete);
    }

    private Reply create(ApiRequest request) {
        Fields f = Fields.of(request.body(), "the task", Set.of("taskId", "title", "description"));
        Task task = tasks.create(request.id("team"), f.requiredId("taskId"),
                f.requiredString("title", Limits.MAX_TASK_TITLE_CHARS), f.string("description", MAX_DESCRIPTION_CHARS),
                clock.instant());
        return Reply.created(Views.task(task));
    }

    private Reply list(ApiRequest request) {
        String statusText = request.query("status");
        TaskStatus status = null;
        if (statusText != null) {
            status = TaskStatus.fromWire(statusText).orElseThrow(() -> LifelineException.badInput("INVALID_STATUS",
                    "'status' must be one of pending, in_progress, done"));
        }
        Page<Task> page = tasks.page(request.id("team"), status,
                AgentsHandler.intQuery(request, "limit", Page.DEFAULT_LIMIT, 1, Page.MAX_LIMIT),
                AgentsHandler.cursor(request));
        ObjectNode body = Json.object().put("count", page.items().size())
                .set("tasks", Views.array(page.items(), Views::task));
        Json.putIfPresent(body, "nextCursor", page.cursor());
        return Reply.ok(body);
    }

    private Reply claim(ApiRequest request) {
        String agentId = Fields.of(request.body(), "the claim", Set.of("agentId")).requiredId("agentId");
        return Reply.ok(answer(tasks.claim(request.id("team"), request.id("taskId"), agentId, clock.instant())));
    }

    private Reply complete(ApiRequest request) {
        Fields f = Fields.of(request.body(), "the completion", Set.of("agentId", "result"));
        return Reply.ok(answer(tasks.complete(request.id("team"), request.id("taskId"), f.requiredId("agentId"),
                f.string("result", MAX_RESULT_CHARS), clock.instant())));
    }

    private static ObjectNode answer(TaskStore.Change change) {
        return Json.object().put("success", true).put("agentStatus", change.agentStatus().wire())
                .set("task", Views.task(change.task()));
    }
}
