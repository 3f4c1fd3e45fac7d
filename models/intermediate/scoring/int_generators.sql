-- Every generator known to the warehouse: the registry seed, the bundle's own generators file and
-- any model that was judged. Cost (METHOD 12; the paper's GPU-s/MP, latency x occupied GPUs per
-- output megapixel) is, in order: the bundle's `measured` figure (a warm, batch-1 calibration:
-- ingestion/backends/drivers/calibration.py), else the mean over the model's images (latency x GPUs /
-- megapixels; `measured` too, but batch-shared and warm-up-including latencies), else the
-- bundle's figure (`bundle`), else the registry seed's (`registry`). A calibrated cost keeps
-- where it was measured (`cost_gpu_model`, `cost_measured_at`: `qct2i calibrate`).
-- Images drawn elsewhere may come without latency or GPU count (`qct2i evaluate --images` without
-- meta.jsonl): their cost is unknown, not zero. A mean over only the timed images would be the
-- cost of a sample nobody chose, so one image without both figures leaves the image cost unknown;
-- with no other figure the cost is `unknown`, and routing (METHOD 12 ranks generators by cost)
-- leaves the generator out, saying why (`router_exclusion`; fct_router_excluded_generators).
with

registry as (
    select * from {{ ref('generators') }}
),

bundle_generators as (
    select * from {{ ref('stg_generators') }}
),

images as (
    select * from {{ ref('stg_images') }}
),

judgments as (
    select * from {{ ref('int_official_judgments') }}
),

calibrated as (
    select
        model_id,
        cost_gpu_s_per_mp,
        cost_gpu_model,
        cost_measured_at
    from bundle_generators
    where cost_source = 'measured' and cost_gpu_s_per_mp is not null
),

image_cost as (
    select
        model_id,
        count(*) as n_images,
        count_if(latency_s is null or gpus is null)::bigint as n_images_without_cost,
        case
            when count_if(latency_s is null or gpus is null) = 0
                then avg(latency_s * gpus / (width_px * height_px / 1e6))
        end as image_gpu_s_per_mp
    from images
    group by model_id
),

measured_cost as (
    select
        coalesce(image_cost.model_id, calibrated.model_id) as model_id,
        coalesce(image_cost.n_images, 0) as n_images,
        coalesce(image_cost.n_images_without_cost, 0) as n_images_without_cost,
        coalesce(
            calibrated.cost_gpu_s_per_mp, image_cost.image_gpu_s_per_mp
        ) as measured_gpu_s_per_mp,
        calibrated.cost_gpu_model,
        calibrated.cost_measured_at
    from image_cost
    full outer join calibrated on image_cost.model_id = calibrated.model_id
),

known_models as (
    select model_id from registry
    union
    select model_id from bundle_generators
    union
    select model_id from judgments
),

final as (
    select
        known_models.model_id,
        coalesce(
            bundle_generators.display_name, registry.display_name, known_models.model_id
        ) as display_name,
        coalesce(bundle_generators.hub_id, registry.hub_repo_id) as hub_repo_id,
        coalesce(bundle_generators.pipeline_class, registry.pipeline_class) as pipeline_class,
        coalesce(measured_cost.n_images, 0) as n_images,
        coalesce(measured_cost.n_images_without_cost, 0) as n_images_without_cost,
        measured_cost.measured_gpu_s_per_mp,
        coalesce(
            measured_cost.measured_gpu_s_per_mp,
            bundle_generators.cost_gpu_s_per_mp,
            registry.cost_gpu_s_per_mp
        ) as cost_gpu_s_per_mp,
        case
            when measured_cost.measured_gpu_s_per_mp is not null then 'measured'
            when bundle_generators.cost_gpu_s_per_mp is not null then 'bundle'
            when registry.cost_gpu_s_per_mp is not null then 'registry'
            when measured_cost.n_images_without_cost > 0 then 'unknown'
        end as cost_source,
        measured_cost.cost_gpu_model,
        measured_cost.cost_measured_at
    from known_models
    left join registry on known_models.model_id = registry.model_id
    left join bundle_generators on known_models.model_id = bundle_generators.model_id
    left join measured_cost on known_models.model_id = measured_cost.model_id
),

with_exclusion as (
    select
        *,
        case
            when cost_source = 'unknown'
                then
                    'cost unknown: ' || n_images_without_cost || ' of ' || n_images
                    || ' images came without latency_s and gpus (drawn elsewhere, no timings),'
                    || ' and no calibration, bundle or registry figure gives a cost'
        end as router_exclusion
    from final
)

select * from with_exclusion
